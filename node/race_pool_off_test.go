//go:build !race

package node

const racePoolDrops = false
