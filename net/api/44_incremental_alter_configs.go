package api

// IncrementalAlterConfigs: v0-v1 (v1 flexible). KIP-339: each config
// change is an operation, SET, DELETE (remove the override), APPEND or
// SUBTRACT (add to or remove from a LIST config's items; INVALID_CONFIG on
// another type). Validate only. The broker-side checks are the legacy
// API's (33_alter_configs.go), except that DELETE may carry a null value.
// A topic's new configs reach its logs when the broker applies the new
// metadata image, before the response.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord"
	"kzero/net/server"
)

func init() {
	register(kmsg.IncrementalAlterConfigs.Int16(), 0, 1, (*Handler).incrementalAlterConfigs)
}

func (h *Handler) incrementalAlterConfigs(req *server.Request) error {
	r := kmsg.NewPtrIncrementalAlterConfigsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	alters := make([]coord.ConfigAlter, len(r.Resources))
	nulls := make([][]string, len(r.Resources))
	for i, res := range r.Resources {
		a := coord.ConfigAlter{ResourceType: int8(res.ResourceType), Name: res.ResourceName}
		for _, c := range res.Configs {
			op := coord.ConfigOp(c.Op)
			if c.Value == nil && op != coord.OpDelete {
				nulls[i] = append(nulls[i], c.Name)
				continue
			}
			ch := coord.ConfigChange{Key: c.Name, Op: op}
			if c.Value != nil {
				ch.Value = *c.Value
			}
			a.Changes = append(a.Changes, ch)
		}
		alters[i] = a
	}
	results := h.authorizedConfigAlters(req, alters, nulls, r.ValidateOnly)
	resp := kmsg.NewPtrIncrementalAlterConfigsResponse()
	for i, res := range r.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
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
