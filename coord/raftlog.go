package coord

import (
	"fmt"
	"log/slog"
)

// raftLogger sends raft's logs to slog. raft's Info lines (elections,
// restarts) go to Debug: a single node elects itself on every start. raft
// calls Fatal and Panic only on broken invariants of its own; they panic,
// as raft's default logger does.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) Debug(v ...any)                 { r.l.Debug(fmt.Sprint(v...)) }
func (r raftLogger) Debugf(format string, v ...any) { r.l.Debug(fmt.Sprintf(format, v...)) }
func (r raftLogger) Info(v ...any)                  { r.l.Debug(fmt.Sprint(v...)) }
func (r raftLogger) Infof(format string, v ...any)  { r.l.Debug(fmt.Sprintf(format, v...)) }
func (r raftLogger) Warning(v ...any)               { r.l.Warn(fmt.Sprint(v...)) }
func (r raftLogger) Warningf(format string, v ...any) {
	r.l.Warn(fmt.Sprintf(format, v...))
}
func (r raftLogger) Error(v ...any)                 { r.l.Error(fmt.Sprint(v...)) }
func (r raftLogger) Errorf(format string, v ...any) { r.l.Error(fmt.Sprintf(format, v...)) }
func (r raftLogger) Fatal(v ...any)                 { r.Panic(v...) }
func (r raftLogger) Fatalf(format string, v ...any) { r.Panicf(format, v...) }
func (r raftLogger) Panic(v ...any) {
	msg := fmt.Sprint(v...)
	r.l.Error(msg)
	panic(msg)
}
func (r raftLogger) Panicf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	r.l.Error(msg)
	panic(msg)
}
