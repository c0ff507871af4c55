package api

import (
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/sasl"
	"kzero/net/server"
)

// Security protocols, Kafka's ids (metadata.Listener.SecurityProtocol).
const (
	ProtocolPlaintext     int16 = 0
	ProtocolSSL           int16 = 1
	ProtocolSaslPlaintext int16 = 2
	ProtocolSaslSSL       int16 = 3
)

// Listener is one client listener as the handlers see it: how its
// connections authenticate.
type Listener struct {
	Name             string
	SecurityProtocol int16
	// Mechanisms are the SASL mechanisms enabled on a SASL listener
	// (sasl.enabled.mechanisms, or listener.name.X.sasl.enabled.mechanisms).
	Mechanisms []string
	// PlainUsers are the PLAIN users and passwords (the user_NAME options
	// of the listener's PlainLoginModule JAAS config).
	PlainUsers map[string]string
	// OAuth configures OAUTHBEARER's unsecured validator (the
	// unsecuredValidator* options of its JAAS config).
	OAuth sasl.OAuthConfig
}

// sasl reports whether the listener's connections authenticate with SASL.
func (l *Listener) sasl() bool {
	return l.SecurityProtocol == ProtocolSaslPlaintext || l.SecurityProtocol == ProtocolSaslSSL
}

// authState is where a connection is in Kafka's SASL server state machine
// (SaslServerAuthenticator).
type authState int8

const (
	// stateHandshake: ApiVersions and SaslHandshake only.
	stateHandshake authState = iota
	// stateAuthenticate: after a v1 handshake, SaslAuthenticate only.
	stateAuthenticate
	// stateLegacy: after a v0 handshake, raw SASL tokens only.
	stateLegacy
	// stateFailed: the connection is closing.
	stateFailed
	// stateDone: authenticated (or a listener without SASL).
	stateDone
)

// session is a connection's authentication, kept as its server.Conn
// value (made once per connection). Requests of a connection are served
// one at a time, so it needs no lock.
type session struct {
	h         *Handler
	listener  *Listener
	host      string // the client's IP address, for ACLs
	state     authState
	mechanism string
	exchange  sasl.Exchange
	// principal is the authenticated principal, Kafka's "User:name";
	// User:ANONYMOUS on a listener without SASL.
	principal string
	// expires is when the authentication expires (KIP-368,
	// connections.max.reauth.ms); zero: never.
	expires time.Time
	// lifetime is the session lifetime told to the client (SaslAuthenticate
	// v1+): expires less the end of the authentication.
	lifetime time.Duration
	reauth   bool // a re-authentication is in progress
	// tokenAuth: authenticated with a delegation token, which may not
	// create, renew, expire or describe tokens (KIP-48).
	tokenAuth bool
	// charge is the request being charged to request_percentage
	// (throttle.go): when its handler began (unix ns), 0 when none; its
	// response, or Serve's return, claims it.
	charge atomic.Int64
}

const anonymous = "User:ANONYMOUS"

var plaintextListener = Listener{Name: "PLAINTEXT"}

// session returns the connection's session, made on its first request.
func (h *Handler) session(c *server.Conn) *session {
	if s, ok := c.Value().(*session); ok {
		return s
	}
	l := h.listeners[c.Listener()]
	if l == nil {
		l = &plaintextListener // a listener the handler was not told about
	}
	s := &session{h: h, listener: l, state: stateDone, principal: anonymous}
	if p := c.Principal(); p != "" && l.SecurityProtocol == ProtocolSSL {
		s.principal = p // the client certificate's (on SASL_SSL, SASL's wins)
	}
	if l.sasl() {
		s.state, s.principal = stateHandshake, ""
	}
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		s.host = a.IP.String()
	}
	c.SetValue(s)
	return s
}

// admit decides whether a request may be served on a connection that is
// not (or no longer) authenticated: before authentication only
// ApiVersions, SaslHandshake and SaslAuthenticate are served, as Kafka
// does; anything else closes the connection. Raw frames are the v0 SASL
// tokens. It reports whether to dispatch the request as usual.
func (h *Handler) admit(s *session, req *server.Request) bool {
	key := req.Header.APIKey
	switch s.state {
	case stateDone:
		// Expired (connections.max.reauth.ms): only a re-authentication.
		if key == kmsg.SASLHandshake.Int16() {
			return true
		}
		req.Fail(fmt.Errorf("authentication of %s expired at %s", s.principal, s.expires.Format(time.RFC3339)))
		return false
	case stateHandshake:
		if key == kmsg.ApiVersions.Int16() || key == kmsg.SASLHandshake.Int16() {
			return true
		}
		req.Fail(fmt.Errorf("Unexpected Kafka request of type %s during SASL handshake.", keyName(key)))
		return false
	case stateAuthenticate:
		if key == kmsg.SASLAuthenticate.Int16() {
			return true
		}
		req.Fail(fmt.Errorf("Unexpected Kafka request of type %s during SASL authentication.", keyName(key)))
		return false
	case stateLegacy:
		if key == server.RawFrame {
			h.legacyToken(s, req)
			return false
		}
	}
	req.Fail(fmt.Errorf("request of type %s in SASL state %d", keyName(key), s.state))
	return false
}

func keyName(key int16) string {
	if key == server.RawFrame {
		return "raw frame"
	}
	return kmsg.NameForKey(key)
}

// exchangeFor starts an exchange of an enabled mechanism kzero serves.
func (h *Handler) exchangeFor(l *Listener, mechanism string) sasl.Exchange {
	switch mechanism {
	case sasl.Plain:
		return sasl.NewPlain(sasl.PlainUsers(l.PlainUsers))
	case sasl.OAuthBearer:
		return sasl.NewOAuthBearer(l.OAuth)
	case sasl.ScramSHA256, sasl.ScramSHA512:
		m := sasl.ScramByName(mechanism)
		return sasl.NewScram(m, func(user string, m *sasl.ScramMechanism) (sasl.Credential, bool) {
			c, ok := h.cluster.Image().ScramCredential(user, m.Type)
			if !ok {
				return sasl.Credential{}, false
			}
			return sasl.Credential{Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations}, true
		}, h.tokenCredential)
	}
	return nil
}

// step feeds a client token to the session's exchange. On success with
// done, the session is authenticated; on error it has failed and the
// returned message is Kafka's SASL_AUTHENTICATION_FAILED text.
func (h *Handler) step(s *session, token []byte) (resp []byte, done bool, msg string, err error) {
	resp, done, err = s.exchange.Step(token)
	if err != nil {
		s.state = stateFailed
		// As Kafka's "Failed authentication with ..." line: the cause is
		// the operator's (a token's failed check), not the client's.
		h.logger.Info("failed authentication", "host", s.host, "listener", s.listener.Name, "mechanism", s.mechanism, "err", err)
		return nil, false, sasl.FailureMessage(s.mechanism, err), err
	}
	if !done {
		return resp, false, "", nil
	}
	principal, tokenAuth := "User:"+s.exchange.User(), false
	if t, ok := s.exchange.(interface{ TokenOwner() string }); ok && t.TokenOwner() != "" {
		principal, tokenAuth = t.TokenOwner(), true
	}
	if s.reauth && principal != s.principal {
		s.state = stateFailed
		msg := fmt.Sprintf("Cannot change principals during re-authentication from %s: %s", s.principal, principal)
		return nil, false, msg, fmt.Errorf("%s", msg)
	}
	// The session ends at connections.max.reauth.ms, or when the
	// credential expires if that is sooner (an OAUTHBEARER token's exp),
	// as Kafka's SaslServerAuthenticator reckons it.
	now := time.Now()
	s.expires, s.lifetime = time.Time{}, 0
	if h.cfg.ReauthAfter > 0 {
		s.expires, s.lifetime = now.Add(h.cfg.ReauthAfter), h.cfg.ReauthAfter
	}
	if e, ok := s.exchange.(interface{ Expiry() time.Time }); ok {
		if exp := e.Expiry(); !exp.IsZero() && (s.expires.IsZero() || exp.Before(s.expires)) {
			s.expires, s.lifetime = exp, max(exp.Sub(now), 0)
		}
	}
	s.principal, s.state, s.exchange, s.reauth, s.tokenAuth = principal, stateDone, nil, false, tokenAuth
	return resp, true, "", nil
}

// legacyToken serves a raw SASL token of the v0 exchange: the answer is a
// raw frame; a failure closes the connection (the v0 exchange has no way
// to carry an error), after connection.failed.authentication.delay.ms.
func (h *Handler) legacyToken(s *session, req *server.Request) {
	resp, done, _, err := h.step(s, req.Body)
	if err != nil {
		h.afterFailureDelay(func() { req.Fail(fmt.Errorf("SASL authentication failed: %w", err)) })
		return
	}
	if done {
		req.Conn().SetRawFrames(false)
		req.Conn().LiftFrameLimit()
	}
	req.RespondRaw(resp)
}

// afterFailureDelay runs f after connection.failed.authentication.delay.ms,
// so a client guessing passwords is slowed down, as in Kafka.
func (h *Handler) afterFailureDelay(f func()) {
	if h.cfg.FailedAuthenticationDelay <= 0 {
		f()
		return
	}
	time.AfterFunc(h.cfg.FailedAuthenticationDelay, f)
}

// respondAndClose sends m, then closes the connection (a failed
// authentication), after the failed authentication delay.
func (h *Handler) respondAndClose(req *server.Request, m kmsg.Response, why string) {
	m.SetVersion(req.Header.APIVersion)
	resp := req.NewResponse()
	resp.AppendMessage(m)
	h.afterFailureDelay(func() { req.RespondAndClose(resp, fmt.Errorf("%s", why)) })
}
