package shards

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The tables from a failed coordinator write (an append or commit-wait
// error) to what the coordinator's caller is told. An error that wraps no
// kerr sentinel is a storage failure: the partition is lost to this
// broker, NOT_COORDINATOR (Kafka's KAFKA_STORAGE_ERROR row). Both tables
// map NOT_ENOUGH_REPLICAS_AFTER_APPEND like NOT_ENOUGH_REPLICAS: kzero's
// coordinator writes are acks=all and their wait reports an ISR that
// shrank meanwhile.

// GroupError is what a group coordinator write failure gives its caller,
// for every API the group coordinator serves (JoinGroup, SyncGroup,
// consumer group heartbeats, OffsetCommit, TxnOffsetCommit, OffsetDelete,
// DeleteGroups): Kafka 4's one table for them
// (CoordinatorOperationExceptionHelper.handleOperationException, and
// GroupMetadataManager.appendGroupMetadataErrorToResponseError, the same
// rows). Errors of no row (INVALID_PRODUCER_EPOCH of a transactional
// offset commit, ...) pass through. It returns nil for nil.
func GroupError(err error) error {
	return remap(err, groupRows, commonRows)
}

// TxnError is what a transaction state write failure gives the
// transaction coordinator's caller: Kafka's
// TransactionStateManager.appendTransactionToLog table. Errors of no row
// pass through. It returns nil for nil.
func TxnError(err error) error {
	return remap(err, nil, commonRows)
}

// commonRows are the rows both tables have.
var commonRows = map[*kerr.Error]error{
	kerr.UnknownTopicOrPartition:      kerr.CoordinatorNotAvailable,
	kerr.NotEnoughReplicas:            kerr.CoordinatorNotAvailable,
	kerr.NotEnoughReplicasAfterAppend: kerr.CoordinatorNotAvailable,
	kerr.RequestTimedOut:              kerr.CoordinatorNotAvailable,
	kerr.NotLeaderForPartition:        kerr.NotCoordinator,
	kerr.KafkaStorageError:            kerr.NotCoordinator,
	kerr.MessageTooLarge:              kerr.UnknownServerError,
	kerr.RecordListTooLarge:           kerr.UnknownServerError,
}

// groupRows are the group coordinator's rows beyond them.
var groupRows = map[*kerr.Error]error{
	kerr.InvalidFetchSize: kerr.UnknownServerError,
}

// remap wraps err with the sentinel its row names (in own, else in
// common), keeping err's text.
func remap(err error, own, common map[*kerr.Error]error) error {
	if err == nil {
		return nil
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return fmt.Errorf("%w: %v", kerr.NotCoordinator, err)
	}
	to, ok := own[ke]
	if !ok {
		to, ok = common[ke]
	}
	if !ok {
		return err
	}
	return fmt.Errorf("%w: %v", to, err)
}

// Code is the Kafka error code of err: 0 for nil, the code of the kerr
// sentinel it wraps, else UNKNOWN_SERVER_ERROR. Coordinators that answer
// with per-member or per-partition codes (response data) use it; the
// API handlers use it at the edge.
func Code(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}
