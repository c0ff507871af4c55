package group

import (
	"errors"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"golang.org/x/sys/unix"

	"kzero/coord/shards"
	krecord "kzero/record"
	"kzero/replica"
)

// Transactional offset commits on a real partition: staged until the
// transaction ends, committed or dropped by its marker, and the same
// after a reload from the partition.

func txnCommit(t *testing.T, c *Coordinator, r TxnCommitRequest, want ...int16) {
	t.Helper()
	if r.Generation == 0 && r.MemberID == "" {
		r.Generation = -1
	}
	if got := c.TxnOffsetCommit(&r); !slices.Equal(codesOf(got), want) {
		t.Fatalf("txn offset commit %+v: codes %v, want %v", r, got, want)
	}
}

func offsetsAt(tps ...any) []CommitOffset {
	var out []CommitOffset
	for i := 0; i < len(tps); i += 2 {
		out = append(out, CommitOffset{TopicPartition: tps[i].(TopicPartition), Offset: int64(tps[i+1].(int)), LeaderEpoch: -1})
	}
	return out
}

// fetched returns what OffsetFetch answers for partitions of topic t.
func fetched(t *testing.T, c *Coordinator, group string, stable bool, topic string, ps ...int32) []FetchedPartition {
	t.Helper()
	got, code := c.FetchOffsetsFor(&FetchRequest{Group: group, Topics: []FetchTopic{{Topic: topic, Partitions: ps}}, RequireStable: stable, MemberEpoch: -1})
	if code != nil || len(got) != 1 {
		t.Fatalf("fetch %s: %v %+v", group, code, got)
	}
	return got[0].Partitions
}

// offsetsOf is the committed offset of each partition (-1 none), or the
// error code's negation minus 1000 when the partition has one.
func offsetsOf(ps []FetchedPartition) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = p.Offset
		if p.Err != nil {
			out[i] = -1000 - int64(shards.Code(p.Err))
		}
	}
	return out
}

var unstable = -1000 - int64(kerr.UnstableOffsetCommit.Code)

func TestTxnOffsetsCommitAbortAndReload(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir)
	c := n.coordinator(1, 0, 0)
	member, gen := joinSync(t, c, "g", "", consumerMetadata("t"), []byte("a"))
	tp0, tp1, tp2 := TopicPartition{Topic: "t", Partition: 0}, TopicPartition{Topic: "t", Partition: 1}, TopicPartition{Topic: "t", Partition: 2}
	if codes := c.CommitOffsets(&CommitRequest{Group: "g", Generation: gen, MemberID: member, RetentionMs: -1, Offsets: offsetsAt(tp0, 1)}); codes[0] != nil {
		t.Fatalf("commit %v", codes)
	}

	// Producer 7 commits tp0 and tp1 in a transaction (v3+: with the
	// member's generation), producer 8 tp0 in another.
	txnCommit(t, c, TxnCommitRequest{Group: "g", ProducerID: 7, Generation: gen, MemberID: member, Offsets: offsetsAt(tp0, 10, tp1, 20)}, 0, 0)
	txnCommit(t, c, TxnCommitRequest{Group: "g", ProducerID: 8, Offsets: offsetsAt(tp0, 30)}, 0)
	if got := offsetsOf(fetched(t, c, "g", false, "t", 0, 1)); !slices.Equal(got, []int64{1, -1}) {
		t.Fatalf("offsets during the transactions %v", got)
	}
	if got := offsetsOf(fetched(t, c, "g", true, "t", 0, 1, 2)); !slices.Equal(got, []int64{unstable, unstable, -1}) {
		t.Fatalf("stable offsets during the transactions %v", got)
	}
	// The whole-group form reports the same per partition.
	all, _ := c.FetchOffsetsFor(&FetchRequest{Group: "g", RequireStable: true, MemberEpoch: -1})
	if len(all) != 1 || !slices.Equal(offsetsOf(all[0].Partitions), []int64{unstable}) {
		t.Fatalf("stable offsets of the group %+v", all)
	}

	if err := c.CompleteTxn(0, 7, 0, 5, true); err != nil {
		t.Fatal(err)
	}
	if err := c.CompleteTxn(0, 8, 0, 5, false); err != nil {
		t.Fatal(err)
	}
	if got := offsetsOf(fetched(t, c, "g", true, "t", 0, 1)); !slices.Equal(got, []int64{10, 20}) {
		t.Fatalf("offsets after commit and abort %v", got)
	}
	// A transaction left open when the broker stops.
	txnCommit(t, c, TxnCommitRequest{Group: "g", ProducerID: 9, Offsets: offsetsAt(tp2, 5)}, 0)

	// The partition holds Kafka's batches: the offsets of a transaction in
	// one transactional batch of its producer, then its marker.
	var txnBatches, markers []krecord.Batch
	for _, b := range readBatches(t, n.lead(0)) {
		switch {
		case b.IsControl():
			markers = append(markers, b)
		case b.IsTransactional():
			txnBatches = append(txnBatches, b)
		}
	}
	if len(txnBatches) != 3 || txnBatches[0].ProducerID() != 7 || txnBatches[0].NumRecords() != 2 || txnBatches[0].BaseSequence() != krecord.NoSequence {
		t.Fatalf("transactional batches %d, first of producer %d with %d records", len(txnBatches), txnBatches[0].ProducerID(), txnBatches[0].NumRecords())
	}
	if len(markers) != 2 {
		t.Fatalf("%d markers", len(markers))
	}
	for i, want := range []krecord.ControlType{krecord.ControlCommit, krecord.ControlAbort} {
		if typ, err := markers[i].ControlType(); err != nil || typ != want || markers[i].ProducerID() != int64(7+i) {
			t.Fatalf("marker %d: %v %v of producer %d", i, typ, err, markers[i].ProducerID())
		}
	}

	c.Close()
	n.close()
	n = openNode(t, dir)
	c = n.coordinator(1, 0, 0)
	if got := offsetsOf(fetched(t, c, "g", true, "t", 0, 1, 2)); !slices.Equal(got, []int64{10, 20, unstable}) {
		t.Fatalf("offsets after reload %v", got)
	}
	if got := offsetsOf(fetched(t, c, "g", false, "t", 2)); !slices.Equal(got, []int64{-1}) {
		t.Fatalf("open transaction's offset visible after reload: %v", got)
	}
	// The transaction coordinator ends the open one after the reload.
	if err := c.CompleteTxn(0, 9, 0, 5, true); err != nil {
		t.Fatal(err)
	}
	if got := offsetsOf(fetched(t, c, "g", true, "t", 2)); !slices.Equal(got, []int64{5}) {
		t.Fatalf("offset of the transaction ended after reload %v", got)
	}
	c.Close()
	c = n.coordinator(1, 0, 0)
	if got := offsetsOf(fetched(t, c, "g", true, "t", 0, 1, 2)); !slices.Equal(got, []int64{10, 20, 5}) {
		t.Fatalf("offsets after the second reload %v", got)
	}
}

// A plain commit made while a transaction is open wins over the
// transaction's offset, committed later: it is the later record.
func TestTxnOffsetsLaterPlainCommitWins(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir)
	c := n.coordinator(1, 0, 0)
	tp0, tp1 := TopicPartition{Topic: "t", Partition: 0}, TopicPartition{Topic: "t", Partition: 1}
	txnCommit(t, c, TxnCommitRequest{Group: "g", ProducerID: 3, Offsets: offsetsAt(tp0, 100, tp1, 100)}, 0, 0)
	if codes := c.CommitOffsets(&CommitRequest{Group: "g", Generation: -1, RetentionMs: -1, Offsets: offsetsAt(tp0, 50)}); codes[0] != nil {
		t.Fatalf("commit %v", codes)
	}
	if err := c.CompleteTxn(0, 3, 0, 0, true); err != nil {
		t.Fatal(err)
	}
	if got := offsetsOf(fetched(t, c, "g", true, "t", 0, 1)); !slices.Equal(got, []int64{50, 100}) {
		t.Fatalf("offsets %v", got)
	}
	c.Close()
	c = n.coordinator(1, 0, 0)
	if got := offsetsOf(fetched(t, c, "g", true, "t", 0, 1)); !slices.Equal(got, []int64{50, 100}) {
		t.Fatalf("offsets after reload %v", got)
	}
	// A transaction's offset written after the plain commit replaces it.
	txnCommit(t, c, TxnCommitRequest{Group: "g", ProducerID: 3, Offsets: offsetsAt(tp0, 70)}, 0)
	if err := c.CompleteTxn(0, 3, 0, 0, true); err != nil {
		t.Fatal(err)
	}
	if got := offsetsOf(fetched(t, c, "g", true, "t", 0)); !slices.Equal(got, []int64{70}) {
		t.Fatalf("offsets %v", got)
	}
	c.Close()
	c = n.coordinator(1, 0, 0)
	if got := offsetsOf(fetched(t, c, "g", true, "t", 0, 1)); !slices.Equal(got, []int64{70, 100}) {
		t.Fatalf("offsets after reload %v", got)
	}
}

func TestTxnOffsetsValidation(t *testing.T) {
	n := openNode(t, t.TempDir())
	c := n.coordinator(2, 0, 0)
	tp := TopicPartition{Topic: "t", Partition: 0}
	member, gen := joinSync(t, c, "b", "", consumerMetadata("t"), []byte("a"))
	static, sgen := joinSync(t, c, "d", "inst", consumerMetadata("t"), []byte("a"))
	for _, tc := range []struct {
		r    TxnCommitRequest
		want int16
	}{
		{TxnCommitRequest{Group: "b", Generation: gen + 1, MemberID: member}, kerr.IllegalGeneration.Code},
		{TxnCommitRequest{Group: "b", Generation: gen, MemberID: "nobody"}, kerr.UnknownMemberID.Code},
		{TxnCommitRequest{Group: "d", Generation: sgen, MemberID: "old", InstanceID: "inst"}, kerr.FencedInstanceID.Code},
		{TxnCommitRequest{Group: "missing", Generation: 1, MemberID: "m"}, kerr.IllegalGeneration.Code},
		{TxnCommitRequest{Group: ""}, kerr.InvalidGroupID.Code},
		{TxnCommitRequest{Group: "b", ProducerID: -1}, kerr.InvalidProducerIDMapping.Code},
		// No member named (before v3): accepted by a group with members.
		{TxnCommitRequest{Group: "b"}, 0},
		{TxnCommitRequest{Group: "d", Generation: sgen, MemberID: static, InstanceID: "inst"}, 0},
		// A group that does not exist is created for offsets only.
		{TxnCommitRequest{Group: "new"}, 0},
	} {
		tc.r.Offsets = offsetsAt(tp, 1)
		if tc.r.ProducerID == 0 {
			tc.r.ProducerID = 1
		}
		txnCommit(t, c, tc.r, tc.want)
	}
	if _, found, _ := c.DescribeGroup("new"); !found {
		t.Fatal("group of a transactional commit not created")
	}

	// A group of a partition led elsewhere ("b", "d", "missing" and "new"
	// hash to partition 0 of 2, "a" to 1).
	txnCommit(t, c, TxnCommitRequest{Group: "a", ProducerID: 1, Offsets: offsetsAt(tp, 1)}, kerr.NotCoordinator.Code)
	if err := c.CompleteTxn(1, 1, 0, 0, true); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("marker for a partition led elsewhere: %v", err)
	}

	// The transaction coordinator bumps the producer's epoch with its
	// marker: the old epoch is fenced.
	if err := c.CompleteTxn(0, 1, 1, 0, false); err != nil {
		t.Fatal(err)
	}
	txnCommit(t, c, TxnCommitRequest{Group: "b", ProducerID: 1, ProducerEpoch: 0, Offsets: offsetsAt(tp, 2)}, kerr.InvalidProducerEpoch.Code)
	if err := c.CompleteTxn(0, 1, 0, 0, true); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("marker of a fenced epoch: %v", err)
	}
	txnCommit(t, c, TxnCommitRequest{Group: "b", ProducerID: 1, ProducerEpoch: 1, Offsets: offsetsAt(tp, 3)}, 0)
}

// Offsets of an open transaction keep their group and partition from
// expiring; deleting the group deletes them, and a reload agrees.
func TestTxnOffsetsExpiryAndDeletion(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir)
	c := n.coordinator(1, 0, 0)
	now := c.now()
	c.now = func() int64 { return now }
	tp0, tp1 := TopicPartition{Topic: "t", Partition: 0}, TopicPartition{Topic: "t", Partition: 1}
	txnCommit(t, c, TxnCommitRequest{Group: "pending", ProducerID: 4, Offsets: offsetsAt(tp0, 1)}, 0)
	if codes := c.CommitOffsets(&CommitRequest{Group: "mixed", Generation: -1, RetentionMs: -1, Offsets: offsetsAt(tp0, 1, tp1, 1)}); !slices.Equal(codesOf(codes), []int16{0, 0}) {
		t.Fatalf("commit %v", codes)
	}
	txnCommit(t, c, TxnCommitRequest{Group: "mixed", ProducerID: 5, Offsets: offsetsAt(tp0, 2)}, 0)
	retention := c.cfg.OffsetsRetention.Milliseconds()
	for _, s := range c.table.All() {
		s.expire(now+2*retention, retention)
	}
	list, _ := c.ListGroups()
	if len(list) != 2 {
		t.Fatalf("groups after expiry %+v", list)
	}
	if got := offsetsOf(fetched(t, c, "mixed", false, "t", 0, 1)); !slices.Equal(got, []int64{1, -1}) {
		t.Fatalf("offsets of mixed after expiry %v", got)
	}
	if got := c.DeleteGroups([]string{"pending"}); got[0] != nil {
		t.Fatalf("delete %v", got)
	}
	// The marker finds nothing left to commit.
	if err := c.CompleteTxn(0, 4, 0, 0, true); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := c.DescribeGroup("pending"); found {
		t.Fatal("deleted group came back with its transaction's commit")
	}
	if err := c.CompleteTxn(0, 5, 0, 0, true); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c = n.coordinator(1, 0, 0)
	if _, found, _ := c.DescribeGroup("pending"); found {
		t.Fatal("deleted group reloaded")
	}
	if got := offsetsOf(fetched(t, c, "mixed", true, "t", 0, 1)); !slices.Equal(got, []int64{2, -1}) {
		t.Fatalf("offsets of mixed after reload %v", got)
	}
}

// readBatches reads every batch of a partition.
func readBatches(t *testing.T, p *replica.Partition) []krecord.Batch {
	t.Helper()
	l := p.Log()
	fr, err := l.Read(l.LogStartOffset(), 1<<30, l.LogEndOffset(), true)
	if err != nil || fr.Empty() {
		t.Fatalf("read: %v", err)
	}
	buf := make([]byte, fr.Len)
	if _, err := unix.Pread(fr.Segment.Fd(), buf, fr.Pos); err != nil {
		t.Fatal(err)
	}
	fr.Release()
	var out []krecord.Batch
	for len(buf) > 0 {
		b, rest, err := krecord.ParseBatch(buf)
		if err != nil {
			t.Fatal(err)
		}
		out, buf = append(out, b), rest
	}
	return out
}
