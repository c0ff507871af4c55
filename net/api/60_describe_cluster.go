package api

// DescribeCluster: v0-v2 (flexible). KIP-700: the brokers, cluster id and
// controller id without a Metadata request; v1 adds the endpoint type
// (KIP-919: a broker listener answers only for brokers, 1; an unknown type
// is UNSUPPORTED_ENDPOINT_TYPE, the controllers' type 2
// MISMATCHED_ENDPOINT_TYPE, both INVALID_REQUEST at v0); v2 lists fenced
// brokers on request (KIP-1073). The
// controller id is the image's, as Metadata gives it. Without an
// authorizer every cluster operation is allowed: the authorized
// operations are all of CLUSTER's when asked for, else Kafka's "omitted".

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() { register(kmsg.DescribeCluster.Int16(), 0, 2, (*Handler).describeCluster) }

// Endpoint types (KIP-919).
const (
	endpointBroker     = 1
	endpointController = 2
)

// clusterOperations is the bit field of every operation on the CLUSTER
// resource: CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9,
// DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12.
const clusterOperations = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12

func (h *Handler) describeCluster(req *server.Request) error {
	r := kmsg.NewPtrDescribeClusterRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDescribeClusterResponse()
	switch r.EndpointType {
	case endpointBroker:
	case endpointController:
		resp.ErrorCode = kerr.MismatchedEndpointType.Code
		msg := "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"
		resp.ErrorMessage = &msg
	default:
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		msg := fmt.Sprintf("Unsupported endpoint type %d", r.EndpointType)
		resp.ErrorMessage = &msg
	}
	if resp.ErrorCode != 0 {
		if r.Version == 0 {
			resp.ErrorCode = kerr.InvalidRequest.Code
		}
		respond(req, resp)
		return nil
	}
	img := h.cluster.Image()
	resp.EndpointType = endpointBroker
	resp.ClusterID = img.ClusterID()
	resp.ControllerID = h.controllerID(img)
	if r.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = h.authorizedOps(req, resCluster, clusterName, clusterOperations)
	}
	for _, b := range img.Brokers() {
		if b.Fenced && !r.IncludeFencedBrokers {
			continue
		}
		for _, l := range b.Listeners {
			if l.Name != req.Conn().Listener() {
				continue // the client's own listener only
			}
			rb := kmsg.NewDescribeClusterResponseBroker()
			rb.NodeID, rb.Host, rb.Port, rb.IsFenced = b.ID, l.Host, l.Port, b.Fenced
			if b.Rack != "" {
				rack := b.Rack
				rb.Rack = &rack
			}
			resp.Brokers = append(resp.Brokers, rb)
		}
	}
	respond(req, resp)
	return nil
}
