package node

import (
	"net/netip"

	"kzero/coord/metadata"
)

// applyQuotaImage hands each new metadata image's client quotas to the
// request handler, once per image (Kafka's quota publisher), so that
// produce, fetch and the request quota read them without looking at the
// image per request. Subscribed once the handler exists.
func (n *Node) applyQuotaImage(_, next *metadata.Image) { n.api.ApplyQuotas(next) }

// ipConnectionRate is an address's connection_creation_rate client quota
// (KIP-612): its own ip entity's, else the default ip entity's, else none
// (0). The acceptor asks it for each connection (server.ConnLimits.IPRate);
// accepting starts after the controller is wired, so n.ctrl is set.
func (n *Node) ipConnectionRate(ip netip.Addr) float64 {
	img := n.ctrl.Image()
	for _, e := range [...]metadata.QuotaEntity{{IP: metadata.Named(ip.String())}, {IP: metadata.DefaultName()}} {
		if v, ok := img.ClientQuota(e, "connection_creation_rate"); ok {
			return v
		}
	}
	return 0
}
