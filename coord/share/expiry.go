package share

import "time"

// Acquisition locks end on time, not when the next request happens to
// look at the partition (Kafka's AcquisitionLockTimerTask): a share
// partition holding acquired records has one timer, armed for its first
// lock deadline whenever the partition is unlocked. When it fires, the
// locks due end and the share fetches parked on the partition wake if
// records became acquirable (Kafka completes its DelayedShareFetch then):
// a fetch waiting behind another member's lock gets the records as soon
// as the lock ends, not at its max wait.
//
// Unlike Kafka, an ended lock does not write the share state at once: an
// acquired record is saved as available with its delivery count anyway,
// and the next acknowledgement's write saves a record archived at the
// delivery limit. (A timer has no leadership check, and the store would
// not fence a deposed leader's write.)

// expiry is an entry's lock timer. Its fields are guarded by the entry's
// mutex.
type expiry struct {
	timer *time.Timer
	at    int64 // ms, the deadline it is armed for; 0: not armed
}

// unlockAndWake unlocks e, arming its lock timer, and wakes the share
// fetches parked on it if records became acquirable while it was locked.
func (e *Entry) unlockAndWake() {
	freed := false
	if e.p != nil {
		e.armLocked()
		freed = e.p.TakeFreed()
	}
	e.mu.Unlock()
	if freed {
		e.m.Notify(e.key)
	}
}

// armLocked makes the lock timer fire by the partition's first lock
// deadline. An armed timer due no later is left alone: when it fires it
// re-arms for the deadline after. Caller holds e.mu.
func (e *Entry) armLocked() {
	due := e.p.LockDue()
	if due == 0 || (e.expiry.at != 0 && e.expiry.at <= due) {
		return
	}
	// One ms late: Expire compares whole ms.
	d := time.Duration(due-time.Now().UnixMilli()+1) * time.Millisecond
	if e.expiry.timer == nil {
		e.expiry.timer = time.AfterFunc(d, e.expire)
	} else {
		e.expiry.timer.Reset(d)
	}
	e.expiry.at = due
}

// expire runs on the lock timer: it ends the locks due and wakes parked
// share fetches if that gave records back.
func (e *Entry) expire() {
	e.mu.Lock()
	e.expiry.at = 0
	if e.gone.Load() || e.p == nil {
		e.mu.Unlock()
		return
	}
	e.p.Expire(time.Now().UnixMilli())
	e.unlockAndWake()
}
