package raftnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	franzsasl "github.com/twmb/franz-go/pkg/sasl"
)

// SASL on the controller listener (SASL_PLAINTEXT, SASL_SSL): the dialer
// authenticates right after TCP (and TLS), before its hello; the acceptor
// reads nothing else until the exchange is done. doc.go ("SASL") has the
// frames.

const (
	// maxAuthTokenLen bounds one SASL token on the wire: an OAUTHBEARER
	// JWT is a few KiB, PLAIN and SCRAM far less.
	maxAuthTokenLen = 64 << 10
	// maxMechanismLen bounds the mechanism name of the first auth frame.
	maxMechanismLen = 64
	// maxAuthFrame is the largest auth frame body: kind, status or
	// mechanism, token.
	maxAuthFrame = 1 + 1 + maxMechanismLen + maxAuthTokenLen
	// maxAuthRounds bounds the exchange: SCRAM takes two client tokens,
	// PLAIN and OAUTHBEARER one (two for OAUTHBEARER's failure).
	maxAuthRounds = 4

	authContinue byte = 0
	authDone     byte = 1
)

// errAuth marks an inbound connection refused for failed authentication.
var errAuth = errors.New("authentication failed")

// appendAuthStart is the payload of the dialer's first auth frame.
func appendAuthStart(b []byte, mechanism string, token []byte) []byte {
	b = append(b, byte(len(mechanism)))
	b = append(b, mechanism...)
	return append(b, token...)
}

// decodeAuthStart splits the dialer's first auth frame: the mechanism
// and its first token (which aliases payload).
func decodeAuthStart(payload []byte) (mechanism string, token []byte, err error) {
	if len(payload) < 1 {
		return "", nil, fmt.Errorf("%w: empty auth frame", errBadFrame)
	}
	n := int(payload[0])
	if n == 0 || n > maxMechanismLen || 1+n > len(payload) {
		return "", nil, fmt.Errorf("%w: auth frame with a mechanism of %d bytes in %d", errBadFrame, n, len(payload))
	}
	token = payload[1+n:]
	if len(token) > maxAuthTokenLen {
		return "", nil, fmt.Errorf("%w: SASL token of %d bytes", errBadFrame, len(token))
	}
	return string(payload[1 : 1+n]), token, nil
}

// decodeAuthReply splits the acceptor's auth frame: whether it is done,
// and its token.
func decodeAuthReply(payload []byte) (done bool, token []byte, err error) {
	if len(payload) < 1 || payload[0] > authDone {
		return false, nil, fmt.Errorf("%w: bad auth reply", errBadFrame)
	}
	return payload[0] == authDone, payload[1:], nil
}

// mechanisms are the names of the enabled server mechanisms, sorted.
func (t *Transport) mechanisms() string {
	return strings.Join(slices.Sorted(maps.Keys(t.cfg.SASL)), ",")
}

// authenticate runs the server side of the SASL exchange on an inbound
// connection, under the handshake's deadline: it returns the
// authenticated user, or an error wrapping errAuth (a refuse frame told
// the dialer why, in Kafka's words where there are some) or errBadFrame.
// The connection carries nothing else until it returns nil.
func (t *Transport) authenticate(rw io.ReadWriter, fr *frameReader) (string, error) {
	refuse := func(reason string, err error) error {
		if d := t.cfg.FailedAuthenticationDelay; d > 0 {
			select {
			case <-time.After(d):
			case <-t.ctx.Done():
			}
		}
		rw.Write(appendFrame(nil, kindRefuse, []byte(reason[:min(len(reason), maxRefuseLen)])))
		return fmt.Errorf("%w: %s", errAuth, err)
	}
	fr.max = maxAuthFrame
	defer func() { fr.max = handshakeMaxFrame }()
	kind, payload, err := fr.next()
	if err != nil {
		return "", err
	}
	if kind != kindAuth {
		reason := fmt.Sprintf("node %d authenticates connections with SASL (%s)", t.cfg.NodeID, t.mechanisms())
		return "", refuse(reason, fmt.Errorf("kind %d instead of SASL", kind))
	}
	mech, token, err := decodeAuthStart(payload)
	if err != nil {
		return "", err
	}
	start := t.cfg.SASL[mech]
	if start == nil {
		reason := fmt.Sprintf("Unsupported SASL mechanism %s (node %d enables %s)", mech, t.cfg.NodeID, t.mechanisms())
		return "", refuse(reason, errors.New(reason))
	}
	x := start()
	for round := 1; ; round++ {
		resp, done, err := x.Step(token)
		if err != nil {
			return "", refuse(t.saslFailure(mech, err), fmt.Errorf("%s: %w", mech, err))
		}
		if len(resp) > maxAuthTokenLen {
			return "", refuse("server token too large", fmt.Errorf("%s: a server token of %d bytes", mech, len(resp)))
		}
		status := authContinue
		if done {
			status = authDone
		}
		if _, err := rw.Write(appendFrame(nil, kindAuth, append([]byte{status}, resp...))); err != nil {
			return "", fmt.Errorf("send SASL token: %w", err)
		}
		if done {
			return x.User(), nil
		}
		if round == maxAuthRounds {
			return "", fmt.Errorf("%w: %s did not finish in %d rounds", errAuth, mech, maxAuthRounds)
		}
		if kind, token, err = fr.next(); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				// The dialer gave up (e.g. OAUTHBEARER's error answer).
				return "", fmt.Errorf("%w: %s: the dialer left in round %d: %w", errAuth, mech, round, err)
			}
			return "", err
		}
		if kind != kindAuth {
			return "", fmt.Errorf("%w: kind %d during SASL", errBadFrame, kind)
		}
		if len(token) > maxAuthTokenLen {
			return "", fmt.Errorf("%w: SASL token of %d bytes", errBadFrame, len(token))
		}
	}
}

// login runs the client side of the SASL exchange on a connection this
// node dialed to addr, under the connection's deadline.
func (t *Transport) login(ctx context.Context, conn net.Conn, addr string) error {
	m := t.cfg.ClientSASL
	host, _, _ := net.SplitHostPort(addr)
	sess, token, err := m.Authenticate(ctx, host)
	if err != nil {
		return fmt.Errorf("SASL %s: %w", m.Name(), err)
	}
	if len(m.Name()) == 0 || len(m.Name()) > maxMechanismLen || len(token) > maxAuthTokenLen {
		return fmt.Errorf("SASL %s: a mechanism name or token too long", m.Name())
	}
	out := appendFrame(nil, kindAuth, appendAuthStart(nil, m.Name(), token))
	fr := newFrameReader(conn, max(maxAuthFrame, handshakeMaxFrame))
	for range maxAuthRounds {
		if _, err := conn.Write(out); err != nil {
			return fmt.Errorf("send SASL token: %w", err)
		}
		kind, payload, err := fr.next()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errors.New("peer closed the connection during SASL (its log says why)")
		}
		if err != nil {
			return fmt.Errorf("read SASL token: %w", err)
		}
		switch kind {
		case kindRefuse:
			return fmt.Errorf("SASL %s refused: %q", m.Name(), payload)
		case kindAuth:
		default:
			return fmt.Errorf("%w: kind %d during SASL", errBadFrame, kind)
		}
		serverDone, challenge, err := decodeAuthReply(payload)
		if err != nil {
			return err
		}
		done, next, err := sess.Challenge(challenge)
		if err != nil {
			return fmt.Errorf("SASL %s: %w", m.Name(), err)
		}
		switch {
		case done && serverDone:
			if fr.buffered() > 0 {
				return fmt.Errorf("%w: data after SASL before the hello", errBadFrame)
			}
			return nil
		case done || serverDone:
			return fmt.Errorf("SASL %s: client and server disagree on the end of the exchange", m.Name())
		case len(next) > maxAuthTokenLen:
			return fmt.Errorf("SASL %s: a token of %d bytes", m.Name(), len(next))
		}
		out = appendFrame(nil, kindAuth, next)
	}
	return fmt.Errorf("SASL %s did not finish in %d rounds", m.Name(), maxAuthRounds)
}

// ClientMechanism is the client side of a SASL mechanism, franz-go's
// (plain.Auth{...}.AsMechanism(), scram.Auth{...}.AsSha256Mechanism(),
// oauth.Auth{...}.AsMechanism()).
type ClientMechanism = franzsasl.Mechanism

// Exchange is one server side of a SASL login: the mechanisms of the
// Kafka listeners (net/sasl) serve here as they are; raftnet, below net
// in the layers, names only what it calls.
type Exchange interface {
	// Step takes the client's next token and returns the answer; done
	// once the client is authenticated, an error once it is refused.
	Step(token []byte) (response []byte, done bool, err error)
	// User is the authenticated user, once Step returned done.
	User() string
}

// saslFailure is what a refused login of mechanism is told.
func (t *Transport) saslFailure(mechanism string, err error) string {
	if f := t.cfg.SASLFailureMessage; f != nil {
		return f(mechanism, err)
	}
	return "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mechanism
}
