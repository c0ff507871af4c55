// Package control is the active controller's decisions, as a pure state
// machine: no clock, no I/O, no goroutines. The raft loop on the quorum
// leader feeds it the current metadata image, an event and the time, and
// gets back the records to propose and the answer to give; it proposes
// the records, and once they applied (or failed) it answers. Kafka 4.x's
// KRaft controller (ReplicationControlManager, PartitionChangeBuilder,
// BrokerHeartbeatManager, ClusterControlManager) is the specification;
// kzero runs it as a new Kafka 4.1+ cluster does, with eligible leader
// replicas (KIP-966, Config.ELR) on.
//
// # Calls
//
//	Register(img, now, Registration)    BrokerRegistration
//	Heartbeat(img, now, Heartbeat)      BrokerHeartbeat: unfence, fence, controlled shutdown
//	Unregister(img, now, id)            UnregisterBroker
//	Tick(img, now)                      session expiry, unclean elections, leader rebalance
//	AlterPartition(img, AlterPartition) ISR changes from partition leaders (v2/v3)
//	ElectLeaders(img, type, partitions) preferred and unclean elections (KIP-460)
//	AlterReassignments(img, []Reassignment), ListReassignments(img, ...)  KIP-455
//	NewPlacer(img, rf, rng), NewPartition(img, id, p, replicas)           new partitions
//
// Each decision returns groups of metadata records ([][]metadata.Record):
// propose them in one entry; each group applies whole or not at all
// (metadata.Builder.Check). Per-partition answers name the group that
// carries their change (Group, -1 when none): if that group is refused
// when it applies, answer with its Rejection. A new incarnation's broker
// epoch is the offset its RegisterBroker record gets: read it from the
// image once the group applied.
//
// # Deciding on the newest image
//
// Every call decides from the image it is given, plus the records the call
// itself emits (a later change in the same call builds on an earlier one:
// see view). Records carry what they were decided on: a PartitionChange
// the partition epoch it produces, a BrokerChange the broker epoch. So a
// decision made on an image that is no longer current cannot corrupt the
// metadata: Check refuses it (INVALID_UPDATE_VERSION, STALE_BROKER_EPOCH)
// and it applies nothing. The raft loop should give the newest applied
// image and not call Tick again while the entry of the previous Tick is in
// flight; a heartbeat whose group was refused can simply be decided again
// on the newer image.
//
// # State
//
// The Controller keeps only what Kafka keeps outside the metadata log: per
// broker, when it last heartbeat and the metadata offset it reported (for
// session expiry and the end of a controlled shutdown), and when the next
// leader rebalance is due. Whether a broker is fenced or in controlled
// shutdown, and every partition's state, are in the image. A quorum leader
// starts a new Controller: every broker then gets a full session timeout.
//
// # Rules
//
// Leader election picks, in replica order, the first ISR member that may
// lead: registered, unfenced, not in controlled shutdown. With ELR, once
// the ISR is empty, the first eligible leader replica that may lead
// (cleanly: it becomes the ISR), then the last known leader (counted as
// unclean). With unclean.leader.election.enable (Config.Unclean resolves
// it per topic) and no such candidate, the first replica that may lead,
// from outside the ISR: its ISR becomes itself alone and it is Recovering
// (KIP-704). No candidate: leader -1. A fenced, shutting-down or
// unregistered broker leaves every ISR. With ELR a replica that leaves an
// ISR below min.insync.replicas (Config.MinInsync resolves it per topic)
// joins the ELR, and the ISR may empty; without ELR it stays in an ISR it
// is the last member of, and that partition has no leader, so that it can
// lead again cleanly when it returns. A broker back from an unclean
// shutdown (Registration.UncleanShutdown) leaves every ELR. Every change
// bumps the partition epoch; a leader change, and a replica leaving the
// assignment, bump the leader epoch; an ISR-only change does not. The
// scripts in testdata show each rule (elr.txt for KIP-966).
package control
