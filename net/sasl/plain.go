package sasl

import (
	"bytes"
	"crypto/subtle"
	"fmt"
)

// Passwords checks a PLAIN user's password; ok is false for an unknown
// user or a wrong password.
type Passwords func(user, password string) (ok bool)

// PlainMessage is a client's PLAIN message (RFC 4616):
//
//	[authzid] NUL authcid NUL passwd
type PlainMessage struct {
	AuthzID, User, Password string
}

// ParsePlain splits a PLAIN message as Kafka's PlainSaslServer does: exactly
// three fields separated by NUL.
func ParsePlain(b []byte) (PlainMessage, error) {
	parts := bytes.SplitN(b, []byte{0}, 4)
	if len(parts) != 3 {
		return PlainMessage{}, &AuthError{Msg: fmt.Sprintf("Invalid SASL/PLAIN response: expected 3 tokens, got %d", min(len(parts), 4))}
	}
	return PlainMessage{AuthzID: string(parts[0]), User: string(parts[1]), Password: string(parts[2])}, nil
}

// plainExchange is PLAIN's one-step exchange.
type plainExchange struct {
	check Passwords
	user  string
	done  bool
	spent bool
}

// NewPlain starts a PLAIN exchange checking passwords with check.
func NewPlain(check Passwords) Exchange { return &plainExchange{check: check} }

func (x *plainExchange) Step(token []byte) ([]byte, bool, error) {
	if x.spent {
		return nil, false, errState
	}
	x.spent = true
	m, err := ParsePlain(token)
	if err != nil {
		return nil, false, err
	}
	switch {
	case m.User == "":
		return nil, false, &AuthError{Msg: "Authentication failed: username not specified"}
	case m.Password == "":
		return nil, false, &AuthError{Msg: "Authentication failed: password not specified"}
	case x.check == nil || !x.check(m.User, m.Password):
		return nil, false, &AuthError{Msg: "Authentication failed: Invalid username or password"}
	case m.AuthzID != "" && m.AuthzID != m.User:
		return nil, false, &AuthError{Msg: "Authentication failed: Client requested an authorization id that is different from username"}
	}
	x.user, x.done = m.User, true
	return []byte{}, true, nil
}

func (x *plainExchange) User() string { return x.user }

// PlainUsers is the Passwords of a JAAS PlainLoginModule's user_NAME
// options (Kafka's PlainServerCallbackHandler). Passwords are compared in
// constant time.
func PlainUsers(users map[string]string) Passwords {
	return func(user, password string) bool {
		want, ok := users[user]
		return ok && subtle.ConstantTimeCompare([]byte(want), []byte(password)) == 1
	}
}
