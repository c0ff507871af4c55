package api

// UpdateFeatures: v0-v2 (KIP-584; v1 replaces AllowDowngrade with an
// upgrade type and adds validate only; v2 drops the per-feature results).
//
// kzero runs each feature it lists in ApiVersions at one level and cannot
// run at another (18_api_versions.go), so nothing can change: the request
// is checked as Kafka's controller checks it and an update to the level
// the feature already has succeeds (Kafka writes the same level again; an
// unknown feature to 0 is the same no-op), while any other level fails as
// Kafka fails a level the controller does not support:
// INVALID_UPDATE_VERSION, "Invalid update version N for feature F. Local
// controller ID only supports versions L" (or "does not support this
// feature" for one kzero does not know). An unknown upgrade type and a
// negative level fail first, as in Kafka. The first failing update is the
// top-level error and nothing is applied; on success v0-v1 list every
// feature with no error, as Kafka 4 answers.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() { register(kmsg.UpdateFeatures.Int16(), 0, 2, (*Handler).updateFeatures) }

// Upgrade types of a feature update (v1+, Kafka's FeatureUpdate.UpgradeType).
const (
	upgrade         = 1
	safeDowngrade   = 2
	unsafeDowngrade = 3
)

func (h *Handler) updateFeatures(req *server.Request) error {
	r := kmsg.NewPtrUpdateFeaturesRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrUpdateFeaturesResponse()
	for _, u := range r.FeatureUpdates {
		kind := u.UpgradeType
		if r.Version == 0 {
			kind = upgrade
			if u.AllowDowngrade {
				kind = safeDowngrade
			}
		}
		if msg := h.featureUpdateError(u.Feature, u.MaxVersionLevel, kind); msg != "" {
			resp.ErrorCode = kerr.InvalidUpdateVersion.Code
			resp.ErrorMessage = &msg
			respond(req, resp)
			return nil
		}
	}
	for _, u := range r.FeatureUpdates {
		res := kmsg.NewUpdateFeaturesResponseResult()
		res.Feature = u.Feature
		resp.Results = append(resp.Results, res)
	}
	respond(req, resp)
	return nil
}

// featureUpdateError is why Kafka's controller would refuse one update,
// given the levels kzero supports; "" if it is allowed (a no-op here).
func (h *Handler) featureUpdateError(name string, level int16, kind int8) string {
	invalid := func(reason string) string {
		return fmt.Sprintf("Invalid update version %d for feature %s. %s", level, name, reason)
	}
	if kind != upgrade && kind != safeDowngrade && kind != unsafeDowngrade {
		return invalid("The controller does not support the given upgrade type.")
	}
	if level < 0 {
		return invalid("A feature version cannot be less than 0.")
	}
	supported, known := featureLevel(name)
	switch {
	case !known && level != 0:
		return invalid(fmt.Sprintf("Local controller %d does not support this feature.", h.cfg.NodeID))
	case known && level != supported:
		return invalid(fmt.Sprintf("Local controller %d only supports versions %d", h.cfg.NodeID, supported))
	}
	return ""
}
