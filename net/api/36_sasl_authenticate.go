package api

// SaslAuthenticate: v0-v2 (KIP-152; v1 adds the session lifetime of
// KIP-368, v2 is flexible). Carries one SASL token each way. A failed
// authentication answers SASL_AUTHENTICATION_FAILED with Kafka's message
// and closes the connection after connection.failed.authentication.delay.ms.
// Once authenticated, ILLEGAL_SASL_STATE (the connection stays).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() { register(kmsg.SASLAuthenticate.Int16(), 0, 2, (*Handler).saslAuthenticate) }

func (h *Handler) saslAuthenticate(req *server.Request) error {
	r := kmsg.NewPtrSASLAuthenticateRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	s := h.session(req.Conn())
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	if s.state != stateAuthenticate {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		msg := "SaslAuthenticate request received after successful authentication"
		resp.ErrorMessage = &msg
		respond(req, resp)
		return nil
	}
	tok, done, msg, err := h.step(s, r.SASLAuthBytes)
	if err != nil {
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		resp.ErrorMessage = &msg
		h.respondAndClose(req, resp, msg)
		return nil
	}
	resp.SASLAuthBytes = tok
	if done {
		req.Conn().LiftFrameLimit()
	}
	if done && !s.expires.IsZero() {
		resp.SessionLifetimeMillis = s.lifetime.Milliseconds()
	}
	respond(req, resp)
	return nil
}
