package wire

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Dialer connects Clients to other brokers as the inter-broker listener's
// security protocol says: plain TCP (PLAINTEXT), then TLS (SSL,
// SASL_SSL), then a SASL authentication (SASL_PLAINTEXT, SASL_SSL). The
// zero Dialer is PLAINTEXT. A Dialer is not changed once in use and is
// safe for concurrent use.
type Dialer struct {
	// TLS is the client side of TLS; ServerName is set per dial to the
	// host dialed. nil: no TLS.
	TLS *tls.Config
	// SASL authenticates each connection before it is used
	// (sasl.mechanism.inter.broker.protocol); nil: none.
	SASL Mechanism
}

// Mechanism is a SASL client mechanism: the shape of franz-go's
// sasl.Mechanism, so its PLAIN and SCRAM clients adapt to it in a line.
type Mechanism interface {
	Name() string
	// Authenticate starts an authentication to host: the session and the
	// first token to send.
	Authenticate(ctx context.Context, host string) (Session, []byte, error)
}

// Session is one SASL authentication in progress: Challenge takes the
// server's token and returns whether the exchange is done and the next
// token to send.
type Session interface {
	Challenge(server []byte) (done bool, next []byte, err error)
}

// Dial connects to a broker over PLAINTEXT. maxFrame bounds a response's
// size.
func Dial(ctx context.Context, addr, clientID string, maxFrame int) (*Client, error) {
	return (*Dialer)(nil).Dial(ctx, addr, clientID, maxFrame)
}

// Dial connects to a broker, with TLS and SASL if d says so; the
// handshakes must finish before ctx is done. maxFrame bounds a
// response's size. A nil Dialer is PLAINTEXT.
func (d *Dialer) Dial(ctx context.Context, addr, clientID string, maxFrame int) (*Client, error) {
	var nd net.Dialer
	conn, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if d == nil || d.TLS == nil && d.SASL == nil {
		return &Client{conn: conn, clientID: []byte(clientID), maxFrame: maxFrame}, nil
	}
	host, _, _ := net.SplitHostPort(addr)
	if d.TLS != nil {
		cfg := d.TLS.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		conn = tc
	}
	c := &Client{conn: conn, clientID: []byte(clientID), maxFrame: maxFrame}
	if d.SASL != nil {
		if err := c.authenticate(ctx, d.SASL, host); err != nil {
			c.Close()
			return nil, fmt.Errorf("SASL %s with %s: %w", d.SASL.Name(), addr, err)
		}
	}
	return c, nil
}

// authenticate runs Kafka's SASL exchange (KIP-152): SaslHandshake v1
// naming the mechanism, then SaslAuthenticate requests carrying the
// tokens until the mechanism is done. The same runs again on the open
// connection when the session the broker granted is near its end.
func (c *Client) authenticate(ctx context.Context, m Mechanism, host string) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, m.Name()
	hsr := kmsg.NewPtrSASLHandshakeResponse()
	if err := c.Do(hs, hsr, deadline); err != nil {
		return err
	}
	if hsr.ErrorCode != 0 {
		return fmt.Errorf("SaslHandshake: error code %d (the broker enables %v)", hsr.ErrorCode, hsr.SupportedMechanisms)
	}
	sess, token, err := m.Authenticate(ctx, host)
	if err != nil {
		return err
	}
	for range 16 { // no mechanism kzero speaks takes more than two rounds
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version, req.SASLAuthBytes = 1, token
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		if err := c.Do(req, resp, deadline); err != nil {
			return err
		}
		if resp.ErrorCode != 0 {
			msg := ""
			if resp.ErrorMessage != nil {
				msg = *resp.ErrorMessage
			}
			return fmt.Errorf("SaslAuthenticate: error code %d: %s", resp.ErrorCode, msg)
		}
		// The response's bytes alias the read buffer: the mechanism reads
		// them before the next request reuses it.
		done, next, err := sess.Challenge(resp.SASLAuthBytes)
		if err != nil {
			return err
		}
		if done {
			// Re-authenticate at 85% of the session (Kafka's clients pick
			// 85-95%), before the broker would close the connection.
			c.sasl, c.host, c.reauthAt = m, host, time.Time{}
			if ms := resp.SessionLifetimeMillis; ms > 0 {
				c.reauthAt = time.Now().Add(time.Duration(ms) * time.Millisecond * 85 / 100)
			}
			return nil
		}
		token = next
	}
	return fmt.Errorf("the exchange did not end")
}
