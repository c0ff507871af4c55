//go:build race

package record

// racePoolDrops: under the race detector sync.Pool drops a share of what
// is Put on purpose, so allocation counts of pooled paths mean nothing.
const racePoolDrops = true
