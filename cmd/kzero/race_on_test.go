//go:build race

package main

// raceEnabled: the race detector is on. Tests whose work happens in child
// processes (built without it) run a shorter loop then: the detector only
// watches the test's own goroutines.
const raceEnabled = true
