//go:build race

package node

// racePoolDrops: under the race detector sync.Pool drops a share of what
// is Put on purpose, so allocation counts of pooled paths mean nothing.
const racePoolDrops = true
