package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// parseProperties reads a Java .properties file as Kafka's
// server.properties uses it: key=value or key: value or key value, # and !
// comments, a trailing backslash continues a line, and backslash escapes
// (\t \n \r \f \uXXXX, anything else stands for itself).
func parseProperties(r io.Reader) (map[string]string, []string, error) {
	props := map[string]string{}
	var order []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var logical strings.Builder
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if logical.Len() == 0 && (line == "" || line[0] == '#' || line[0] == '!') {
			continue
		}
		if continues(line) {
			logical.WriteString(line[:len(line)-1])
			continue
		}
		logical.WriteString(line)
		k, v, err := splitProperty(logical.String())
		logical.Reset()
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		if _, dup := props[k]; !dup {
			order = append(order, k)
		}
		props[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if logical.Len() > 0 { // a continuation on the last line
		k, v, err := splitProperty(logical.String())
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		if _, dup := props[k]; !dup {
			order = append(order, k)
		}
		props[k] = v
	}
	return props, order, nil
}

// continues reports whether a line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func splitProperty(s string) (string, string, error) {
	// The key ends at the first unescaped '=', ':' or whitespace.
	end := len(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == '=' || s[i] == ':' || s[i] == ' ' || s[i] == '\t' || s[i] == '\f' {
			end = i
			break
		}
	}
	key, err := unescape(s[:end])
	if err != nil {
		return "", "", err
	}
	rest := strings.TrimLeft(s[end:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	val, err := unescape(rest)
	if err != nil {
		return "", "", err
	}
	if key == "" {
		return "", "", fmt.Errorf("property without a key")
	}
	return key, val, nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i == len(s)-1 {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("short \\u escape in %q", s)
			}
			var r rune
			if _, err := fmt.Sscanf(s[i+1:i+5], "%04x", &r); err != nil {
				return "", fmt.Errorf("bad \\u escape in %q", s)
			}
			b.WriteRune(r)
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}
