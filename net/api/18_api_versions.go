package api

// ApiVersions: v0-v4 (KIP-35, KIP-511 client software name/version, KIP-584
// features in tagged fields from v3). The response header is always v0.
//
// A request of a version above v4 is answered as v0 with
// UNSUPPORTED_VERSION and the full list, so the client can retry (KIP-511).

import (
	"regexp"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/net/server"
)

func init() { register(kmsg.ApiVersions.Int16(), 0, 4, (*Handler).apiVersions) }

// The feature levels this broker runs at (KIP-584). Only features whose
// behaviour is implemented are listed: clients turn on KIP-848 groups
// (group.version) and transactions v2 (transaction.version) only when the
// broker lists them. kzero implements one level of each and cannot run at
// another (it cannot turn KIP-848 groups or transactions v2 off), so each
// is supported at that level alone and finalized at it; UpdateFeatures
// refuses any other level (57_update_features.go).
var features = []struct {
	name  string
	level int16
}{
	{"metadata.version", metadata.MetadataVersion}, // 4.1-IV1
	{"transaction.version", 2},                     // KIP-890 part 2: EndTxn v5, Produce v12, TxnOffsetCommit v5
	{"group.version", 1},                           // KIP-848 consumer groups: ConsumerGroupHeartbeat, ConsumerGroupDescribe
	{"share.version", 1},                           // KIP-932 share groups: ShareGroupHeartbeat, ShareFetch, ShareAcknowledge
	{"streams.version", 1},                         // KIP-1071 streams groups: StreamsGroupHeartbeat, StreamsGroupDescribe
	{"eligible.leader.replicas.version", 1},        // KIP-966: strict min ISR, ELR (coord/control/change.go)
}

// featureLevel is the level kzero runs a feature at; ok is false for a
// feature it does not know.
func featureLevel(name string) (level int16, ok bool) {
	for _, f := range features {
		if f.name == name {
			return f.level, true
		}
	}
	return 0, false
}

// softwareName is the pattern KIP-511 requires of client software name and
// version strings.
var softwareName = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)

func (h *Handler) apiVersions(req *server.Request) error {
	r := kmsg.NewPtrApiVersionsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := h.apiVersionsResponse()
	if r.Version >= 3 && (!softwareName.MatchString(r.ClientSoftwareName) || !softwareName.MatchString(r.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
	}
	respond(req, resp)
	return nil
}

// unsupportedAPIVersions answers an ApiVersions request of a version this
// broker does not serve: v0, UNSUPPORTED_VERSION, and the supported list.
func (h *Handler) unsupportedAPIVersions(req *server.Request) {
	resp := h.apiVersionsResponse()
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.SetVersion(0)
	out := req.NewResponse()
	out.AppendMessage(resp)
	req.Respond(out)
}

func (h *Handler) apiVersionsResponse() *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	keys := make([]int16, 0, len(apis))
	for k := range apis {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		_, max, min := h.versions(apis[k])
		resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k, MinVersion: min, MaxVersion: max})
	}
	for _, f := range features {
		resp.SupportedFeatures = append(resp.SupportedFeatures, kmsg.ApiVersionsResponseSupportedFeature{Name: f.name, MinVersion: f.level, MaxVersion: f.level})
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, kmsg.ApiVersionsResponseFinalizedFeature{Name: f.name, MinVersionLevel: f.level, MaxVersionLevel: f.level})
	}
	// Kafka's epoch is the metadata offset the features were read at: a
	// client keeps the answer with the highest epoch it has seen.
	resp.FinalizedFeaturesEpoch = 1
	if h.cluster != nil {
		if img := h.cluster.Image(); img != nil {
			resp.FinalizedFeaturesEpoch = max(img.Offset(), 1)
		}
	}
	return resp
}
