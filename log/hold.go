package log

// A replica moving to another log dir (replica/move.go) copies the log
// into a future log while it is written, then, for its last step, holds
// the log's writes: appends, truncations and DeleteRecordsBefore wait on
// the writer's lock, which they take anyway, until the future log is
// swapped in. The hold costs the writes nothing else: a flag read under
// that lock.

// HoldWrites makes the log's writes wait (Append, TruncateTo,
// TruncateFullyAndStartAt, DeleteRecordsBefore) until ReleaseWrites; it
// returns once the write in progress, if any, is done. Reads, flushes,
// retention and Close go on. A write that waited for a log closed
// meanwhile fails as on any closed log. One holder at a time.
func (l *Log) HoldWrites() {
	l.mu.Lock()
	l.mu.held = true
	l.mu.Unlock()
}

// ReleaseWrites lets the writes HoldWrites held go on.
func (l *Log) ReleaseWrites() {
	l.mu.Lock()
	l.mu.held = false
	l.mu.Unlock()
	l.released.Broadcast()
}

// waitWritableLocked waits while the writes are held. Caller holds l.mu.
func (l *Log) waitWritableLocked() {
	for l.mu.held {
		l.mu.waiting++
		l.released.Wait()
		l.mu.waiting--
	}
}

// HeldWrites is how many writes wait for ReleaseWrites.
func (l *Log) HeldWrites() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.waiting
}
