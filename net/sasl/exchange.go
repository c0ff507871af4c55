package sasl

import "errors"

// Mechanism names, as clients send them in SaslHandshake.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
)

// An Exchange is one authentication in progress: the server side of a
// mechanism's token exchange. Step is called with each client token, in
// order, from one goroutine at a time.
type Exchange interface {
	// Step takes the client's next token and returns the server's answer.
	// done is true once the client is authenticated; an error means it is
	// not and the exchange is over.
	Step(token []byte) (response []byte, done bool, err error)
	// User is the authenticated user name, once Step returned done.
	User() string
}

// AuthError is a failed authentication whose message Kafka shows the
// client as it is (Kafka's SaslAuthenticationException). Any other error
// from Step is reported with the generic message of FailureMessage. Err,
// when set, is the cause the broker logs but does not tell the client
// (why a token failed validation).
type AuthError struct {
	Msg string
	Err error
}

func (e *AuthError) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *AuthError) Unwrap() error { return e.Err }

// FailureMessage is the SASL_AUTHENTICATION_FAILED message Kafka sends for
// err: an AuthError's own text, else Kafka's generic one for mechanism.
func FailureMessage(mechanism string, err error) string {
	var ae *AuthError
	if errors.As(err, &ae) {
		return ae.Msg
	}
	return "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mechanism
}

// errState is a token after the exchange ended.
var errState = errors.New("sasl: unexpected token after the exchange ended")
