package record

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Errors is a batch rejected for some of its records: Kafka answers
// a produce with the index of each within the batch and why (the
// RecordErrors of ProduceResponse v8+), so a client can tell which
// records were at fault.
type Errors struct {
	Err     error // a kerr sentinel: INVALID_RECORD, INVALID_TIMESTAMP
	Records []Rejected
}

// Rejected is one rejected record: its index in the batch and why.
type Rejected struct {
	Index   int32
	Message string
}

func (e *Errors) Error() string {
	if len(e.Records) == 0 {
		return e.Err.Error()
	}
	name := e.Err.Error()
	var ke *kerr.Error
	if errors.As(e.Err, &ke) {
		name = ke.Message
	}
	return fmt.Sprintf("%d records rejected, the first (index %d): %s: %s", len(e.Records), e.Records[0].Index, e.Records[0].Message, name)
}

func (e *Errors) Unwrap() error { return e.Err }
