package record

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Errors is a batch rejected for some of its records: Kafka answers
// a produce with the index of each within the batch and why (the
// RecordErrors of ProduceResponse v8+), so a client can tell which
// records were at fault.
type Errors struct {
	Err     *kerr.Error
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
	return fmt.Sprintf("%d records rejected, the first (index %d): %s: %s", len(e.Records), e.Records[0].Index, e.Records[0].Message, e.Err.Message)
}

func (e *Errors) Unwrap() error { return e.Err }
