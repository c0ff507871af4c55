package sasl

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// ClientFirst is a SCRAM client-first-message (RFC 5802 section 7), in the
// subset Kafka accepts:
//
//	n,[a=authzid],[m=reserved,]n=saslname,r=nonce[,ext=value]...
//
// Only the gs2 header "n" (no channel binding) is accepted.
type ClientFirst struct {
	AuthzID    string
	User       string // the saslname unescaped (=2C is ',', =3D is '=')
	Nonce      string
	Extensions map[string]string
	Bare       string // client-first-message-bare: from "n=" on, for the AuthMessage
}

// ParseClientFirst parses a client-first-message.
func ParseClientFirst(b []byte) (ClientFirst, error) {
	msg := string(b)
	bad := func() (ClientFirst, error) {
		return ClientFirst{}, fmt.Errorf("Invalid SCRAM client first message format: %q: %w", msg, errBadCredentials)
	}
	f := strings.Split(msg, ",")
	if len(f) < 4 || f[0] != "n" {
		return bad()
	}
	var cf ClientFirst
	if f[1] != "" {
		a, ok := strings.CutPrefix(f[1], "a=")
		if !ok || !validSaslName(a) {
			return bad()
		}
		cf.AuthzID = unescapeSaslName(a)
	}
	i := 2
	if v, ok := strings.CutPrefix(f[i], "m="); ok {
		if !validValue(v) {
			return bad()
		}
		i++
	}
	if len(f) < i+2 {
		return bad()
	}
	bareAt := len(f[0]) + 1 + len(f[1]) + 1
	if i == 3 {
		bareAt += len(f[2]) + 1
	}
	name, ok := strings.CutPrefix(f[i], "n=")
	if !ok || !validSaslName(name) {
		return bad()
	}
	nonce, ok := strings.CutPrefix(f[i+1], "r=")
	if !ok || !validPrintable(nonce) {
		return bad()
	}
	exts, ok := parseExtensions(f[i+2:])
	if !ok {
		return bad()
	}
	cf.User, cf.Nonce, cf.Extensions, cf.Bare = unescapeSaslName(name), nonce, exts, msg[bareAt:]
	return cf, nil
}

// ClientFinal is a SCRAM client-final-message:
//
//	c=channel-binding,r=nonce[,ext=value]...,p=proof
type ClientFinal struct {
	ChannelBinding []byte
	Nonce          string
	Proof          []byte
	WithoutProof   string // client-final-message-without-proof, for the AuthMessage
}

// ParseClientFinal parses a client-final-message.
func ParseClientFinal(b []byte) (ClientFinal, error) {
	msg := string(b)
	bad := func() (ClientFinal, error) {
		return ClientFinal{}, fmt.Errorf("Invalid SCRAM client final message format: %q: %w", msg, errBadCredentials)
	}
	f := strings.Split(msg, ",")
	if len(f) < 3 {
		return bad()
	}
	c, ok := strings.CutPrefix(f[0], "c=")
	if !ok {
		return bad()
	}
	cb, err := base64.StdEncoding.Strict().DecodeString(c)
	if err != nil {
		return bad()
	}
	nonce, ok := strings.CutPrefix(f[1], "r=")
	if !ok || !validPrintable(nonce) {
		return bad()
	}
	p, ok := strings.CutPrefix(f[len(f)-1], "p=")
	if !ok || p == "" {
		return bad()
	}
	proof, err := base64.StdEncoding.Strict().DecodeString(p)
	if err != nil {
		return bad()
	}
	if _, ok := parseExtensions(f[2 : len(f)-1]); !ok {
		return bad()
	}
	return ClientFinal{ChannelBinding: cb, Nonce: nonce, Proof: proof, WithoutProof: msg[:len(msg)-len(f[len(f)-1])-1]}, nil
}

// parseExtensions reads ALPHA=VALUE fields.
func parseExtensions(fields []string) (map[string]string, bool) {
	var exts map[string]string
	for _, e := range fields {
		k, v, ok := strings.Cut(e, "=")
		if !ok || k == "" || !validValue(v) {
			return nil, false
		}
		for i := 0; i < len(k); i++ {
			if c := k[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
				return nil, false
			}
		}
		if exts == nil {
			exts = map[string]string{}
		}
		exts[k] = v
	}
	return exts, true
}

// validSaslName: one or more of 0x01-0x7F but '=' and ',', or =2C, =3D.
func validSaslName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '=':
			if !strings.HasPrefix(s[i:], "=2C") && !strings.HasPrefix(s[i:], "=3D") {
				return false
			}
			i += 2
		case c == 0 || c > 0x7F || c == ',':
			return false
		}
	}
	return true
}

func unescapeSaslName(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "=2C", ","), "=3D", "=")
}

// validValue: one or more of 0x01-0x7F but ','.
func validValue(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c > 0x7F || c == ',' {
			return false
		}
	}
	return true
}

// validPrintable: one or more of 0x21-0x7E but ','.
func validPrintable(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7E || c == ',' {
			return false
		}
	}
	return true
}
