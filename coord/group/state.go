package group

import "strings"

// State is a group's state, as Kafka names them: a classic group's, or a
// KIP-848 consumer group's (Empty, Assigning, Reconciling, Stable, Dead).
type State int8

const (
	// Empty: no members; the group may still hold committed offsets.
	Empty State = iota
	// PreparingRebalance: members are (re)joining; JoinGroup responses
	// wait until every member joined or the rebalance timeout passed.
	PreparingRebalance
	// CompletingRebalance: the generation is formed; members wait for
	// the leader's assignment (SyncGroup).
	CompletingRebalance
	// Stable: every member has its assignment.
	Stable
	// Dead: the group is deleted or unloaded.
	Dead
	// Assigning (consumer groups): the group epoch moved past the
	// target assignment's, which is computed at the next heartbeat.
	Assigning
	// Reconciling (consumer groups): some member has not reached its
	// target assignment yet.
	Reconciling
	// NotReady (streams groups): the topology's topics are missing or
	// wrongly partitioned, so no tasks are assigned.
	NotReady
)

var stateNames = [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Assigning", "Reconciling", "NotReady"}

// String is the state's name in ListGroups and DescribeGroups.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "Unknown"
	}
	return stateNames[s]
}

// ParseState reads a state name, ignoring case (ListGroups' states filter).
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if strings.EqualFold(n, name) {
			return State(i), true
		}
	}
	return 0, false
}
