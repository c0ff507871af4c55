package metadata

import (
	"errors"
	"fmt"
)

// MaxTopicNameLen is Kafka's limit on a topic name's length.
const MaxTopicNameLen = 249

// ValidateTopicName applies Kafka's rules: 1 to 249 characters from
// [a-zA-Z0-9._-], and neither "." nor "..". (Collisions between names that
// differ only in '.' versus '_' are checked against the image, see
// Image.CollidingTopic.)
func ValidateTopicName(name string) error {
	switch {
	case name == "":
		return errors.New("Topic name is illegal, it can't be empty")
	case name == "." || name == "..":
		return errors.New("Topic name cannot be \".\" or \"..\"")
	case len(name) > MaxTopicNameLen:
		return fmt.Errorf("Topic name is illegal, it can't be longer than %d characters, topic name: %s", MaxTopicNameLen, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("Topic name %q is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return nil
}
