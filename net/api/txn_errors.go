package api

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// fencedCode is the code of a transaction coordinator error for a request
// of version v: PRODUCER_FENCED arrived with KIP-588 at version fencedFrom
// of each transactional API; older clients know it as
// INVALID_PRODUCER_EPOCH.
func fencedCode(err error, v, fencedFrom int16) int16 {
	if errors.Is(err, kerr.ProducerFenced) && v < fencedFrom {
		return kerr.InvalidProducerEpoch.Code
	}
	return errCode(err)
}
