package server

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// principalRule is one rule of ssl.principal.mapping.rules (Kafka's
// SslPrincipalMapper): DEFAULT (the DN as it is), or
// RULE:pattern/replacement/[LU], which applies when pattern matches the
// whole DN and maps it to replacement ($1 for a group), then to lower (L)
// or upper (U) case.
type principalRule struct {
	re      *regexp.Regexp // nil: DEFAULT
	repl    string         // in Go's Expand syntax (${1})
	toLower bool
	toUpper bool
}

// parsePrincipalRules parses the rules, comma-separated: a comma inside a
// rule's pattern or replacement belongs to it (a rule ends after its
// third slash and its optional L or U). Empty means DEFAULT.
func parsePrincipalRules(s string) ([]principalRule, error) {
	var rules []principalRule
	rest := strings.TrimSpace(s)
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "DEFAULT"):
			rules = append(rules, principalRule{})
			rest = rest[len("DEFAULT"):]
		case strings.HasPrefix(rest, "RULE:"):
			rest = rest[len("RULE:"):]
			pattern, after, ok := cutUnescaped(rest)
			if !ok {
				return nil, fmt.Errorf("rule %q: no / after the pattern", "RULE:"+rest)
			}
			repl, after2, ok := cutUnescaped(after)
			if !ok {
				return nil, fmt.Errorf("rule %q: no / after the replacement", "RULE:"+rest)
			}
			re, err := regexp.Compile(`^(?:` + pattern + `)$`)
			if err != nil {
				return nil, fmt.Errorf("rule pattern %q: %w", pattern, err)
			}
			r := principalRule{re: re, repl: javaReplacement(repl)}
			if after2 != "" && (after2[0] == 'L' || after2[0] == 'U') {
				r.toLower, r.toUpper = after2[0] == 'L', after2[0] == 'U'
				after2 = after2[1:]
			}
			rules = append(rules, r)
			rest = after2
		default:
			return nil, fmt.Errorf("%q is not DEFAULT or RULE:pattern/replacement/[LU]", rest)
		}
		rest = strings.TrimSpace(rest)
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return nil, fmt.Errorf("%q: rules are separated by commas", rest)
		}
		rest = strings.TrimSpace(rest[1:])
	}
	if len(rules) == 0 {
		rules = []principalRule{{}}
	}
	return rules, nil
}

// cutUnescaped splits s at its first slash not escaped by a backslash.
func cutUnescaped(s string) (before, after string, ok bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '/':
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

// javaReplacement turns a java.util.regex replacement ($1, \x escapes)
// into Go's Expand template (${1}, $$).
func javaReplacement(r string) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		switch c := r[i]; {
		case c == '\\' && i+1 < len(r):
			i++
			if r[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(r[i])
			}
		case c == '$':
			j := i + 1
			for j < len(r) && r[j] >= '0' && r[j] <= '9' {
				j++
			}
			b.WriteString("${" + r[i+1:j] + "}")
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// mapPrincipal maps a distinguished name by the first rule that applies,
// as Kafka does; no rule applying fails the authentication.
func mapPrincipal(rules []principalRule, dn string) (string, error) {
	for _, r := range rules {
		if r.re == nil {
			return dn, nil
		}
		m := r.re.FindStringSubmatchIndex(dn)
		if m == nil {
			continue
		}
		name := string(r.re.ExpandString(nil, r.repl, dn, m))
		switch {
		case r.toLower:
			name = strings.ToLower(name)
		case r.toUpper:
			name = strings.ToUpper(name)
		}
		return name, nil
	}
	return "", fmt.Errorf("no ssl.principal.mapping.rules rule applies to %q", dn)
}

// principal is Kafka's principal for a client certificate: User:, then
// its subject DN mapped by the listener's rules.
func (t *TLS) principal(cert *x509.Certificate) (string, error) {
	name, err := mapPrincipal(t.rules, distinguishedName(cert.Subject))
	if err != nil {
		return "", err
	}
	return "User:" + name, nil
}

// dnKeywords are the attribute keywords Java's X500Principal.getName()
// (RFC 2253) emits; other attributes appear as OID=#hex.
var dnKeywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.9":                    "STREET",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// distinguishedName formats a subject as Kafka sees it (Java's
// X500Principal.getName(), RFC 2253): the most specific RDN first,
// "CN=alice,OU=eng,O=example,C=US", multi-valued RDNs joined by '+',
// values escaped as RFC 2253 says.
func distinguishedName(n pkix.Name) string {
	rdns := n.ToRDNSequence()
	var b strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		for j, atv := range rdns[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			oid := atv.Type.String()
			kw, known := dnKeywords[oid]
			s, isString := atv.Value.(string)
			if !known || !isString {
				der, err := asn1.Marshal(atv.Value)
				if err != nil {
					continue
				}
				b.WriteString(oid + "=#" + hex.EncodeToString(der))
				continue
			}
			b.WriteString(kw + "=")
			escapeDNValue(&b, s)
		}
	}
	return b.String()
}

// escapeDNValue writes an attribute value escaped as RFC 2253 section 2.4
// says.
func escapeDNValue(b *strings.Builder, s string) {
	for i, r := range s {
		switch {
		case r == ',' || r == '+' || r == '"' || r == '\\' || r == '<' || r == '>' || r == ';':
			b.WriteByte('\\')
			b.WriteRune(r)
		case i == 0 && (r == ' ' || r == '#'):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == ' ' && i == len(s)-1:
			b.WriteString("\\ ")
		case r < 0x20 || r == utf8.RuneError:
			fmt.Fprintf(b, "\\%02X", r)
		default:
			b.WriteRune(r)
		}
	}
}
