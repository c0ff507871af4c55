package api

import "github.com/twmb/franz-go/pkg/kerr"

// fencedCode is the code of a transaction coordinator error for a request
// of version v: PRODUCER_FENCED arrived with KIP-588 at version fencedFrom
// of each transactional API; older clients know it as
// INVALID_PRODUCER_EPOCH.
func fencedCode(err *kerr.Error, v, fencedFrom int16) int16 {
	if err == nil {
		return 0
	}
	if err == kerr.ProducerFenced && v < fencedFrom {
		return kerr.InvalidProducerEpoch.Code
	}
	return err.Code
}
