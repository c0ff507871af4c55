package sasl

import (
	"fmt"
	"strings"
)

// LoginModule is one entry of a JAAS configuration:
//
//	<login module class> <control flag> (<option>=<value>)* ;
type LoginModule struct {
	Class   string
	Flag    string // required, requisite, sufficient or optional (lower case)
	Options map[string]string
}

// PlainLoginModule is the class whose user_NAME options are the PLAIN users.
const PlainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"

// ParseJAAS parses a sasl.jaas.config value as Kafka's JaasConfig does
// (with java.io.StreamTokenizer): words of letters, digits and ._-$,
// values quoted with " or ', // and /* */ comments, at least one entry,
// each ended by ';'.
func ParseJAAS(s string) ([]LoginModule, error) {
	t := &jaasTokenizer{s: s}
	var out []LoginModule
	for {
		tok, err := t.next()
		if err != nil {
			return nil, err
		}
		if tok.kind == tokEOF {
			break
		}
		if tok.kind != tokWord {
			return nil, fmt.Errorf("login module class expected in JAAS config, got %q", tok.text)
		}
		m := LoginModule{Class: tok.text, Options: map[string]string{}}
		flag, err := t.next()
		if err != nil {
			return nil, err
		}
		if flag.kind == tokEOF {
			return nil, fmt.Errorf("Login module control flag not specified in JAAS config")
		}
		switch f := strings.ToLower(flag.text); {
		case flag.kind == tokWord && (f == "required" || f == "requisite" || f == "sufficient" || f == "optional"):
			m.Flag = f
		default:
			return nil, fmt.Errorf("Invalid login module control flag '%s' in JAAS config", flag.text)
		}
		for {
			key, err := t.next()
			if err != nil {
				return nil, err
			}
			if key.kind == tokEOF {
				return nil, fmt.Errorf("Configuration %s not terminated by ';' in JAAS config", m.Class)
			}
			if key.kind == tokSymbol && key.text == ";" {
				break
			}
			eq, err := t.next()
			if err != nil {
				return nil, err
			}
			val, err := t.next()
			if err != nil {
				return nil, err
			}
			if key.kind == tokSymbol || eq.text != "=" || eq.kind != tokSymbol || (val.kind != tokWord && val.kind != tokQuoted) {
				return nil, fmt.Errorf("Value not specified for key '%s' in JAAS config", key.text)
			}
			m.Options[key.text] = val.text
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("Login module not specified in JAAS config")
	}
	return out, nil
}

// PlainUsersFromJAAS returns the user_NAME options of the config's
// PlainLoginModule entries: user name to password.
func PlainUsersFromJAAS(mods []LoginModule) map[string]string {
	users := map[string]string{}
	for _, m := range mods {
		if m.Class != PlainLoginModule {
			continue
		}
		for k, v := range m.Options {
			if name, ok := strings.CutPrefix(k, "user_"); ok {
				users[name] = v
			}
		}
	}
	return users
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokQuoted
	tokSymbol
)

type token struct {
	kind tokKind
	text string
}

type jaasTokenizer struct {
	s string
	i int
}

func isWordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '-' || c == '_' || c == '$' || c >= 0x80
}

func (t *jaasTokenizer) next() (token, error) {
	for t.i < len(t.s) {
		c := t.s[t.i]
		switch {
		case c <= ' ':
			t.i++
		case strings.HasPrefix(t.s[t.i:], "//"):
			end := strings.IndexAny(t.s[t.i:], "\n\r")
			if end < 0 {
				t.i = len(t.s)
			} else {
				t.i += end
			}
		case strings.HasPrefix(t.s[t.i:], "/*"):
			end := strings.Index(t.s[t.i+2:], "*/")
			if end < 0 {
				t.i = len(t.s)
			} else {
				t.i += 2 + end + 2
			}
		case c == '"' || c == '\'':
			return t.quoted(c)
		case isWordChar(c):
			start := t.i
			for t.i < len(t.s) && isWordChar(t.s[t.i]) {
				t.i++
			}
			return token{tokWord, t.s[start:t.i]}, nil
		default:
			t.i++
			return token{tokSymbol, string(c)}, nil
		}
	}
	return token{kind: tokEOF}, nil
}

// quoted reads a quoted value; a backslash escapes the next character
// (\n, \t, \r, \b, \f as in Java, others as themselves).
func (t *jaasTokenizer) quoted(q byte) (token, error) {
	t.i++
	var b strings.Builder
	for t.i < len(t.s) {
		c := t.s[t.i]
		t.i++
		switch {
		case c == q:
			return token{tokQuoted, b.String()}, nil
		case c == '\n' || c == '\r':
			return token{}, fmt.Errorf("unterminated quoted value in JAAS config")
		case c == '\\' && t.i < len(t.s):
			e := t.s[t.i]
			t.i++
			switch e {
			case 'n':
				e = '\n'
			case 't':
				e = '\t'
			case 'r':
				e = '\r'
			case 'b':
				e = '\b'
			case 'f':
				e = '\f'
			}
			b.WriteByte(e)
		default:
			b.WriteByte(c)
		}
	}
	return token{}, fmt.Errorf("unterminated quoted value in JAAS config")
}
