//go:build !invariants

package log

// invariants is false without the invariants build tag: the checks of
// invariants.go compile away.
const invariants = false
