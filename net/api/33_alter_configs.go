package api

// AlterConfigs: v0-v2 (v2 flexible). The legacy API: each resource's
// configs are its whole new set of dynamic configs, so keys it leaves out
// are removed (coord.ConfigAlter Replace). Validate only. The checks
// Kafka's broker makes before forwarding come first: a resource named
// twice fails every time it appears ("Each resource must appear at most
// once."), a repeated key or a null value fails its resource with
// INVALID_REQUEST. Then the controller checks names and values (see
// coord.Controller.AlterConfigs). A topic's new configs reach its logs when
// the broker applies the new metadata image, before the response.

import (
	"context"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord"
	"kzero/net/server"
)

func init() { register(kmsg.AlterConfigs.Int16(), 0, 2, (*Handler).alterConfigs) }

func (h *Handler) alterConfigs(req *server.Request) error {
	r := kmsg.NewPtrAlterConfigsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	alters := make([]coord.ConfigAlter, len(r.Resources))
	nulls := make([][]string, len(r.Resources))
	for i, res := range r.Resources {
		a := coord.ConfigAlter{ResourceType: int8(res.ResourceType), Name: res.ResourceName, Replace: true}
		for _, c := range res.Configs {
			if c.Value == nil {
				nulls[i] = append(nulls[i], c.Name)
				continue
			}
			a.Changes = append(a.Changes, coord.ConfigChange{Key: c.Name, Op: coord.OpSet, Value: *c.Value})
		}
		alters[i] = a
	}
	results := h.authorizedConfigAlters(req, alters, nulls, r.ValidateOnly)
	resp := kmsg.NewPtrAlterConfigsResponse()
	for i, res := range r.Resources {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		if res := results[i]; res.Err != nil {
			rr.ErrorCode = errCode(res.Err)
			rr.ErrorMessage = resultMessage(res)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	respond(req, resp)
	return nil
}

// applyConfigAlters runs the checks Kafka's broker makes before it forwards
// an alter to the controller (ConfigAdminManager.preprocess: repeated
// resources, repeated keys, null values, in that order), then passes the
// alters that survive to the controller. nulls[i] are the keys of alter i
// that came with a null value where one is required. One result per alter.
func (h *Handler) applyConfigAlters(alters []coord.ConfigAlter, nulls [][]string, validateOnly bool) []coord.Result {
	results := make([]coord.Result, len(alters))
	type resource struct {
		typ  int8
		name string
	}
	seen := map[resource]int{}
	for _, a := range alters {
		seen[resource{a.ResourceType, a.Name}]++
	}
	var pass []coord.ConfigAlter
	var owner []int
	for i, a := range alters {
		switch {
		case seen[resource{a.ResourceType, a.Name}] > 1:
			results[i] = coord.Result{Err: kerr.InvalidRequest, Message: "Each resource must appear at most once."}
		case repeatsKey(a, nulls[i]):
			results[i] = coord.Result{Err: kerr.InvalidRequest, Message: "Error due to duplicate config keys"}
		case len(nulls[i]) > 0:
			results[i] = coord.Result{Err: kerr.InvalidRequest, Message: "Null value not supported for : " + strings.Join(nulls[i], ", ")}
		default:
			pass = append(pass, a)
			owner = append(owner, i)
		}
	}
	if len(pass) == 0 {
		return results
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout(0))
	defer cancel()
	for j, res := range h.cluster.AlterConfigs(ctx, pass, validateOnly) {
		results[owner[j]] = res
	}
	return results
}

// repeatsKey reports whether a config key appears twice among an alter's
// changes and its null-valued keys.
func repeatsKey(a coord.ConfigAlter, nulls []string) bool {
	keys := make(map[string]bool, len(a.Changes)+len(nulls))
	for _, c := range a.Changes {
		if keys[c.Key] {
			return true
		}
		keys[c.Key] = true
	}
	for _, k := range nulls {
		if keys[k] {
			return true
		}
		keys[k] = true
	}
	return false
}

// resultMessage is a result's ErrorMessage: null when there is no text.
func resultMessage(r coord.Result) *string {
	if r.Message == "" {
		return nil
	}
	m := r.Message
	return &m
}

// configDenied is the error for a principal without op (DESCRIBE_CONFIGS,
// ALTER_CONFIGS) on a config resource: a topic, or the cluster for a
// broker's configs; nil when allowed.
func (h *Handler) configDenied(req *server.Request, typ int8, name string, op int8) *kerr.Error {
	switch typ {
	case int8(kmsg.ConfigResourceTypeTopic):
		if !h.authorized(req, op, resTopic, name) {
			return kerr.TopicAuthorizationFailed
		}
	case int8(kmsg.ConfigResourceTypeBroker), int8(kmsg.ConfigResourceTypeBrokerLogger):
		if !h.authorized(req, op, resCluster, clusterName) {
			return kerr.ClusterAuthorizationFailed
		}
	case int8(kmsg.ConfigResourceTypeGroupConfig):
		if !h.authorized(req, op, resGroup, name) {
			return kerr.GroupAuthorizationFailed
		}
	}
	return nil
}

// authorizedConfigAlters applies the alters the principal may make
// (ALTER_CONFIGS) and answers the others with the authorization error.
func (h *Handler) authorizedConfigAlters(req *server.Request, alters []coord.ConfigAlter, nulls [][]string, validateOnly bool) []coord.Result {
	if h.authz == nil {
		return h.applyConfigAlters(alters, nulls, validateOnly)
	}
	results := make([]coord.Result, len(alters))
	var okAlters []coord.ConfigAlter
	var okNulls [][]string
	var at []int
	for i, a := range alters {
		if denied := h.configDenied(req, a.ResourceType, a.Name, opAlterCfg); denied != nil {
			results[i] = coord.Result{Err: denied, Message: denied.Description}
			continue
		}
		okAlters, okNulls, at = append(okAlters, a), append(okNulls, nulls[i]), append(at, i)
	}
	for k, res := range h.applyConfigAlters(okAlters, okNulls, validateOnly) {
		results[at[k]] = res
	}
	return results
}
