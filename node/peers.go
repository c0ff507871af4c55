package node

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/txn"
	"kzero/log"
	"kzero/net/wire"
)

// peerClients keeps connections to the other brokers for the requests one
// broker makes of another outside replication: a transaction coordinator's
// markers to partition leaders (WriteTxnMarkers), and a partition leader's
// check of a transactional write with the transaction's coordinator
// (AddPartitionsToTxn v4+, KIP-890). Each connection carries one request
// at a time; idle ones are kept, a few per broker.
type peerClients struct {
	n    *Node
	mu   sync.Mutex
	idle map[int32][]*wire.Client
}

const (
	peerIdlePerBroker = 4
	peerTimeout       = 30 * time.Second
)

func (ps *peerClients) do(broker int32, req kmsg.Request, resp kmsg.Response) error {
	ps.mu.Lock()
	var c *wire.Client
	if l := ps.idle[broker]; len(l) > 0 {
		c, ps.idle[broker] = l[len(l)-1], l[:len(l)-1]
	}
	ps.mu.Unlock()
	if c == nil {
		addr, ok := ps.n.brokerAddr(broker)
		if !ok {
			return fmt.Errorf("no address for broker %d: %w", broker, kerr.BrokerNotAvailable)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var err error
		c, err = ps.n.cfg.InterBroker.Dial(ctx, addr, "kzero-broker-"+strconv.Itoa(int(ps.n.nodeID)), 16<<20)
		cancel()
		if err != nil {
			return fmt.Errorf("broker %d: %w", broker, err)
		}
	}
	if err := c.Do(req, resp, time.Now().Add(peerTimeout)); err != nil {
		return fmt.Errorf("broker %d: %w", broker, err) // c is closed
	}
	ps.mu.Lock()
	if ps.idle == nil {
		ps.idle = map[int32][]*wire.Client{}
	}
	if len(ps.idle[broker]) < peerIdlePerBroker {
		ps.idle[broker] = append(ps.idle[broker], c)
		c = nil
	}
	ps.mu.Unlock()
	if c != nil {
		c.Close()
	}
	return nil
}

func (ps *peerClients) close() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, l := range ps.idle {
		for _, c := range l {
			c.Close()
		}
	}
	ps.idle = nil
}

// leaderOf is the leader of a partition in this node's metadata, -1 for
// none or an unknown partition.
func (n *Node) leaderOf(tp log.TopicPartition) int32 {
	t := n.ctrl.Image().Topic(tp.Topic)
	if t == nil || int(tp.Partition) >= len(t.Partitions) || tp.Partition < 0 {
		return -1
	}
	return t.Partitions[tp.Partition].Leader
}

// clusterMarkers writes a transaction's markers where the partitions are
// led: locally, or with WriteTxnMarkers to the leading broker.
type clusterMarkers struct {
	n     *Node
	local txn.LocalMarkers
}

// WriteMarker implements txn.MarkerWriter.
func (m clusterMarkers) WriteMarker(tp log.TopicPartition, producerID int64, epoch int16, coordinatorEpoch int32, commit bool, txnVersion int16) error {
	leader := m.n.leaderOf(tp)
	if leader < 0 || leader == m.n.nodeID {
		return m.local.WriteMarker(tp, producerID, epoch, coordinatorEpoch, commit, txnVersion)
	}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.SetVersion(1)
	if txnVersion >= 2 {
		req.SetVersion(2)
	}
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = producerID, epoch, commit, coordinatorEpoch
	mk.TransactionVersion = int8(txnVersion)
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = tp.Topic, []int32{tp.Partition}
	mk.Topics = append(mk.Topics, mt)
	req.Markers = append(req.Markers, mk)
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	if err := m.n.peers.do(leader, req, resp); err != nil {
		return fmt.Errorf("marker for %s: %w", tp, err)
	}
	for _, rm := range resp.Markers {
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					if rp.ErrorCode == kerr.UnknownTopicOrPartition.Code {
						return nil // deleted meanwhile: nothing to mark
					}
					return fmt.Errorf("marker for %s at broker %d: %w", tp, leader, err)
				}
				return nil
			}
		}
	}
	return fmt.Errorf("marker for %s: broker %d answered no partition: %w", tp, leader, kerr.UnknownServerError)
}

// txnRouter sends a partition leader's check of a transactional write to
// the transaction's coordinator when another broker runs it.
type txnRouter struct{ n *Node }

// AddToTxn implements api.TxnRouter.
func (r txnRouter) AddToTxn(transactionalID string, producerID int64, epoch int16, tp log.TopicPartition, add bool) (int16, bool) {
	n := r.n
	coordinator := n.leaderOf(log.TopicPartition{Topic: txn.TopicName, Partition: n.txns.PartitionFor(transactionalID)})
	switch {
	case coordinator == n.nodeID:
		return 0, true
	case coordinator < 0:
		return kerr.NotEnoughReplicas.Code, false // no coordinator now: the producer retries
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.SetVersion(5)
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = transactionalID, producerID, epoch, !add
	t := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	t.Topic, t.Partitions = tp.Topic, []int32{tp.Partition}
	tx.Topics = append(tx.Topics, t)
	req.Transactions = append(req.Transactions, tx)
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	if err := n.peers.do(coordinator, req, resp); err != nil {
		n.logger.Info("cannot reach the transaction coordinator", "coordinator", coordinator, "err", err)
		return kerr.NotEnoughReplicas.Code, false
	}
	if resp.ErrorCode != 0 {
		return resp.ErrorCode, false
	}
	for _, rt := range resp.Transactions {
		for _, t := range rt.Topics {
			for _, p := range t.Partitions {
				return p.ErrorCode, false
			}
		}
	}
	return kerr.UnknownServerError.Code, false
}
