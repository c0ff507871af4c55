package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/panjf2000/gnet/v2/pkg/logging"
)

// gnetLogger passes gnet's log lines to slog (nil: slog.Default() at the
// time of the line). gnet's Info lines (start-up banners) go to Debug.
type gnetLogger struct{ l *slog.Logger }

func (g gnetLogger) log(level slog.Level, format string, args []any) {
	l := g.l
	if l == nil {
		l = slog.Default()
	}
	if l.Enabled(context.Background(), level) {
		l.Log(context.Background(), level, "gnet: "+fmt.Sprintf(format, args...))
	}
}

func (g gnetLogger) Debugf(format string, args ...any) { g.log(slog.LevelDebug, format, args) }
func (g gnetLogger) Infof(format string, args ...any)  { g.log(slog.LevelDebug, format, args) }
func (g gnetLogger) Warnf(format string, args ...any)  { g.log(slog.LevelWarn, format, args) }
func (g gnetLogger) Errorf(format string, args ...any) { g.log(slog.LevelError, format, args) }
func (g gnetLogger) Fatalf(format string, args ...any) { g.log(slog.LevelError, format, args) }

var quietOnce sync.Once

// quietGnet replaces gnet's process-wide default logger, which prints a
// banner on stdout at every start, with slog's default logger.
func quietGnet() {
	quietOnce.Do(func() { logging.SetDefaultLoggerAndFlusher(gnetLogger{}, nil) })
}
