package api

// SaslHandshake: v0-v1 (KIP-43; v1 with KIP-152: the tokens then travel in
// SaslAuthenticate requests, v0 leaves them as raw size-prefixed frames).
// The client names a mechanism; the answer lists the listener's enabled
// ones. An unknown mechanism answers UNSUPPORTED_SASL_MECHANISM and closes
// the connection. On a listener without SASL, or once authenticated,
// ILLEGAL_SASL_STATE; an authenticated connection may hand-shake again to
// re-authenticate (KIP-368) when connections.max.reauth.ms is set, with the
// same mechanism.

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() { register(kmsg.SASLHandshake.Int16(), 0, 1, (*Handler).saslHandshake) }

func (h *Handler) saslHandshake(req *server.Request) error {
	r := kmsg.NewPtrSASLHandshakeRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	s := h.session(req.Conn())
	resp := kmsg.NewPtrSASLHandshakeResponse()
	if !s.listener.sasl() || (s.state == stateDone && h.cfg.ReauthAfter <= 0) {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		respond(req, resp)
		return nil
	}
	resp.SupportedMechanisms = s.listener.Mechanisms
	x := h.exchangeFor(s.listener, r.Mechanism)
	if !slices.Contains(s.listener.Mechanisms, r.Mechanism) || x == nil {
		s.state = stateFailed
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		h.respondAndClose(req, resp, "Unsupported SASL mechanism "+r.Mechanism)
		return nil
	}
	if s.state == stateDone { // re-authentication (KIP-368)
		if r.Version < 1 || r.Mechanism != s.mechanism {
			s.state = stateFailed
			resp.ErrorCode = kerr.IllegalSaslState.Code
			h.respondAndClose(req, resp, "SASL mechanism changed during re-authentication: "+s.mechanism+" to "+r.Mechanism)
			return nil
		}
		s.reauth = true
	}
	s.mechanism, s.exchange = strings.Clone(r.Mechanism), x // r aliases the request buffer
	if r.Version == 0 {
		s.state = stateLegacy
		req.Conn().SetRawFrames(true)
	} else {
		s.state = stateAuthenticate
	}
	respond(req, resp)
	return nil
}
