package node

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"kzero/log"
	"kzero/net/api"
	"kzero/net/quota"
	"kzero/net/server"
	"kzero/replica"
)

// metricsHandler serves /metrics: the network layer's counters, the logs'
// sizes, and the Go runtime and process collectors.
func (n *Node) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	counter := func(name, help string, f func(server.Stats) int64) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "kzero", Name: name, Help: help},
			func() float64 { return float64(f(n.ServerStats())) }))
	}
	counter("connections_opened_total", "Connections accepted.", func(s server.Stats) int64 { return s.ConnectionsOpened })
	counter("accept_errors_total", "Failed accepts (out of descriptors or kernel memory), each retried after a backoff.", func(s server.Stats) int64 { return s.AcceptErrors })
	counter("connections_closed_total", "Connections closed.", func(s server.Stats) int64 { return s.ConnectionsClosed })
	counter("connections_idle_closed_total", "Connections closed by connections.max.idle.ms.", func(s server.Stats) int64 { return s.IdleClosed })
	counter("connections_rejected_total", "Connections closed for a malformed or oversize frame.", func(s server.Stats) int64 { return s.Rejected })
	counter("requests_total", "Requests received.", func(s server.Stats) int64 { return s.Requests })
	counter("connections_limited_total", "Connections closed at accept for their address's max.connections.per.ip (or its override).", func(s server.Stats) int64 { return s.ConnectionsLimited })
	counter("accept_waits_total", "Times an acceptor waited for a slot under max.connections / listener.name.X.max.connections or for max.connection.creation.rate.", func(s server.Stats) int64 { return s.AcceptWaits })
	counter("connection_mutes_total", "Connections muted for a quota's throttle time (KIP-219).", func(s server.Stats) int64 { return s.Mutes })
	counter("read_pauses_total", "Times a connection stopped reading at queued.max.request.bytes.", func(s server.Stats) int64 { return s.ReadPauses })
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kzero", Name: "request_bytes_held", Help: "Bytes held by requests being read and queued (capped by queued.max.request.bytes)."},
		func() float64 { return float64(n.ServerStats().RequestBytesHeld) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kzero", Name: "free_request_buffer_bytes", Help: "Bytes of free request buffers of 1 MiB and more kept for the next large requests (each until unused for 10 s; at most 256 MiB, or queued.max.request.bytes if lower)."},
		func() float64 { return float64(n.ServerStats().FreeFrameBytes) }))
	counter("fetch_zero_copy_bytes_total", "Record bytes sent with sendfile.", func(s server.Stats) int64 { return s.ZeroCopyBytes })
	counter("fetch_copied_bytes_total", "Record bytes sent through a buffer, or through the user-space TLS relay (sendfile into it, then copied).", func(s server.Stats) int64 { return s.CopiedBytes })
	counter("direct_response_writes_total", "Responses written by the goroutine that completed them (a produce answering a waiting fetch, a timer) rather than by their connection's event loop.", func(s server.Stats) int64 { return s.DirectWrites })
	counter("tls_handshakes_total", "TLS handshakes completed.", func(s server.Stats) int64 { return s.TLSHandshakes })
	counter("tls_handshake_failures_total", "TLS handshakes failed (the connection was closed).", func(s server.Stats) int64 { return s.TLSHandshakeFailures })
	counter("tls_kernel_connections_total", "TLS connections whose records the kernel protects (kTLS: fetches keep sendfile).", func(s server.Stats) int64 { return s.KernelTLSConns })
	counter("tls_user_connections_total", "TLS connections served through the user-space relay (the kernel refused kTLS, or ssl.kernel.offload.enable=false).", func(s server.Stats) int64 { return s.UserTLSConns })
	counter("tls_user_bytes_total", "Bytes the user-space TLS relay encrypted for clients.", func(s server.Stats) int64 { return s.UserTLSBytes })
	counter("tls_kernel_record_closes_total", "kTLS connections closed on a record that is not application data (an alert, a TLS 1.3 KeyUpdate).", func(s server.Stats) int64 { return s.KernelTLSRecordCloses })
	for _, key := range []string{"producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate"} {
		labels := prometheus.Labels{"quota": key}
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "kzero", Name: "quota_throttled_total",
			Help: "Responses throttled for a client quota (throttle_time_ms > 0 and the connection muted).", ConstLabels: labels},
			func() float64 { return float64(n.quotaStats()[key].Throttles) }))
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "kzero", Name: "quota_throttle_seconds_total",
			Help: "Throttle time given for a client quota.", ConstLabels: labels},
			func() float64 { return n.quotaStats()[key].ThrottleTime.Seconds() }))
	}
	conv := func(name, help string, f func(api.ConversionStats) int64) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "kzero", Name: name, Help: help},
			func() float64 { return float64(f(api.Conversions())) }))
	}
	conv("produce_up_converted_sets_total", "Message sets v0/v1 (Produce v0-v2) up-converted to record batches.", func(s api.ConversionStats) int64 { return s.ProduceSets })
	conv("produce_up_converted_bytes_total", "Bytes of message sets up-converted.", func(s api.ConversionStats) int64 { return s.ProduceBytes })
	conv("fetch_down_converted_partitions_total", "Partitions of Fetch v0-v3 responses down-converted to message sets.", func(s api.ConversionStats) int64 { return s.FetchPartitions })
	conv("fetch_down_converted_batches_total", "Record batches down-converted for Fetch v0-v3.", func(s api.ConversionStats) int64 { return s.FetchBatches })
	conv("fetch_down_converted_bytes_total", "Message set bytes sent to Fetch v0-v3 after down-conversion.", func(s api.ConversionStats) int64 { return s.FetchBytes })
	// A controller-only node has no replicas: their metrics read zero.
	replStats := func() replica.Stats {
		if n.replicas == nil {
			return replica.Stats{}
		}
		return n.replicas.Stats()
	}
	repl := func(name, help string, f func(replica.Stats) float64) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "kzero", Name: name, Help: help},
			func() float64 { return f(replStats()) }))
	}
	replGauge := func(name, help string, f func(replica.Stats) float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kzero", Name: name, Help: help},
			func() float64 { return f(replStats()) }))
	}
	repl("follower_fetch_bytes_total", "Record bytes read for followers' fetches (as leader); fetch_zero_copy_bytes_total counts those sent with sendfile too.",
		func(s replica.Stats) float64 { return float64(s.FollowerReadBytes) })
	repl("follower_served_bytes_total", "Record bytes consumers read from this broker as a follower (KIP-392).",
		func(s replica.Stats) float64 { return float64(s.ServedAsFollower) })
	repl("replica_fetched_bytes_total", "Record bytes this broker's fetchers copied from leaders.", func(s replica.Stats) float64 { return float64(s.FetchedBytes) })
	repl("isr_shrinks_total", "ISR shrinks asked of the controller.", func(s replica.Stats) float64 { return float64(s.ISRShrinks) })
	repl("isr_expands_total", "ISR expansions asked of the controller.", func(s replica.Stats) float64 { return float64(s.ISRExpands) })
	repl("replica_moved_bytes_total", "Record bytes replica moves between log dirs copied (AlterReplicaLogDirs).", func(s replica.Stats) float64 { return float64(s.MovedBytes) })
	repl("replica_move_held_bytes_total", "Record bytes replica moves copied with the partition's writes held (their last step).",
		func(s replica.Stats) float64 { return float64(s.MoveHeldBytes) })
	replGauge("under_replicated_partitions", "Partitions led here whose ISR is smaller than their replicas.", func(s replica.Stats) float64 { return float64(s.UnderReplicated) })
	replGauge("leader_partitions", "Partitions led here.", func(s replica.Stats) float64 { return float64(s.Leaders) })
	replGauge("follower_partitions", "Partitions followed here.", func(s replica.Stats) float64 { return float64(s.Followers) })
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kzero", Name: "partitions", Help: "Partition logs on this broker."},
		func() float64 { return float64(len(n.logs.Logs())) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kzero", Name: "stray_partitions",
		Help: "Partition folders set aside as stray (the metadata does not name them), left for the operator."},
		func() float64 { return float64(n.logs.Strays()) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kzero", Name: "offline_partitions", Help: "Partitions led here whose log failed to open (KAFKA_STORAGE_ERROR)."},
		func() float64 {
			if n.replicas == nil {
				return 0
			}
			return float64(n.replicas.OfflineCount())
		}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kzero", Name: "segment_files_open", Help: "Sealed segment files open (log.segment.open.files.max bounds the idle ones)."},
		func() float64 { return float64(n.logs.Files().Stats().Open) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "kzero", Name: "segment_files_reopened_total", Help: "Sealed segment files reopened for a read."},
		func() float64 { return float64(n.logs.Files().Stats().Opened) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "kzero", Name: "segment_files_evicted_total", Help: "Idle sealed segment files closed to stay within the bound."},
		func() float64 { return float64(n.logs.Files().Stats().Evicted) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "kzero", Name: "offset_index_repairs_total", Help: "Damaged offset indexes found by reads and rebuilt."},
		func() float64 { return float64(log.IndexRepairs()) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kzero", Name: "log_size_bytes", Help: "Bytes in all partition logs."},
		func() float64 {
			var size int64
			for _, l := range n.logs.Logs() {
				size += l.Size()
			}
			return float64(size)
		}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// quotaStats are the client quota counters, none on a controller-only node.
func (n *Node) quotaStats() map[string]quota.Stats {
	if n.api == nil {
		return nil
	}
	return n.api.QuotaStats()
}
