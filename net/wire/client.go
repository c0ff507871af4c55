package wire

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Client is the inter-broker side of the codec: one connection to another
// broker, one request at a time (a follower's fetcher, which waits for each
// answer before it asks again). Requests and responses are kmsg messages;
// a response's byte fields (a fetch's records) alias the client's read
// buffer and are valid until the next call. A Client is used by one
// goroutine; any error leaves it closed.
type Client struct {
	conn     net.Conn
	clientID []byte
	corr     int32
	maxFrame int
	wbuf     []byte
	rbuf     []byte

	// The SASL login, kept to re-authenticate (KIP-368) before the
	// session the broker granted ends; reauthAt zero: never.
	sasl     Mechanism
	host     string
	reauthAt time.Time
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Do sends req and reads its answer into resp (of req's key; its version
// is set to req's). The exchange must finish before deadline.
func (c *Client) Do(req kmsg.Request, resp kmsg.Response, deadline time.Time) error {
	if c.sasl != nil && !c.reauthAt.IsZero() && time.Now().After(c.reauthAt) {
		c.reauthAt = time.Time{} // authenticate's own requests pass
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := c.authenticate(ctx, c.sasl, c.host)
		cancel()
		if err != nil {
			c.conn.Close()
			return fmt.Errorf("SASL re-authentication: %w", err)
		}
	}
	if err := c.do(req, resp, deadline); err != nil {
		c.conn.Close()
		return fmt.Errorf("%s v%d: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return nil
}

func (c *Client) do(req kmsg.Request, resp kmsg.Response, deadline time.Time) error {
	if err := c.conn.SetDeadline(deadline); err != nil {
		return err
	}
	hv, ok := RequestHeaderVersion(req.Key(), req.GetVersion())
	if !ok {
		return ErrUnknownAPIKey
	}
	c.corr++
	h := RequestHeader{APIKey: req.Key(), APIVersion: req.GetVersion(), CorrelationID: c.corr, ClientID: c.clientID, Version: hv}
	b := append(c.wbuf[:0], 0, 0, 0, 0)
	b = AppendRequestHeader(b, &h)
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	c.wbuf = b
	if _, err := c.conn.Write(b); err != nil {
		return err
	}
	var size [4]byte
	if _, err := io.ReadFull(c.conn, size[:]); err != nil {
		return err
	}
	n, err := FrameSize(size[:], c.maxFrame)
	if err != nil {
		return err
	}
	if n < 4 {
		return fmt.Errorf("response frame of %d bytes: %w", n, ErrTruncated)
	}
	if cap(c.rbuf) < n {
		c.rbuf = make([]byte, n)
	}
	body := c.rbuf[:n]
	if _, err := io.ReadFull(c.conn, body); err != nil {
		return err
	}
	if corr := int32(binary.BigEndian.Uint32(body)); corr != c.corr {
		return fmt.Errorf("response correlation id %d, want %d", corr, c.corr)
	}
	body = body[4:]
	if h.ResponseFlexible() {
		if body, err = skipTags(body); err != nil {
			return err
		}
	}
	resp.SetVersion(req.GetVersion())
	return resp.(interface{ UnsafeReadFrom([]byte) error }).UnsafeReadFrom(body)
}
