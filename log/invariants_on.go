//go:build invariants

package log

// invariants is true in builds with the invariants tag (go test -tags
// invariants): the log then checks, after the changes that could break
// them, properties too expensive to check in production (invariants.go),
// and panics when one fails.
const invariants = true
