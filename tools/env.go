package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultBrokers is where kzctl looks for a broker when neither --brokers
// nor KZERO_BROKERS says: kzero's default listener.
const DefaultBrokers = "127.0.0.1:9092"

// DefaultTimeout bounds each administrative command.
const DefaultTimeout = 30 * time.Second

// Env is what every command gets: where the cluster is, where to write and
// how.
type Env struct {
	Brokers []string      // seed brokers, host:port
	Out     io.Writer     // command output
	Format  Format        // Text or JSON
	Timeout time.Duration // bounds an administrative command; 0 is DefaultTimeout
}

// ParseBrokers splits a comma-separated broker list, dropping blanks.
func ParseBrokers(s string) []string {
	var out []string
	for _, b := range strings.Split(s, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

func (e *Env) timeout() time.Duration {
	if e.Timeout > 0 {
		return e.Timeout
	}
	return DefaultTimeout
}

// client opens a kgo client to the env's brokers with opts added.
func (e *Env) client(opts ...kgo.Opt) (*kgo.Client, error) {
	if len(e.Brokers) == 0 {
		return nil, usagef("no brokers given")
	}
	base := []kgo.Opt{
		kgo.SeedBrokers(e.Brokers...),
		kgo.ClientID("kzctl"),
		kgo.DialTimeout(min(e.timeout(), 10*time.Second)),
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return cl, nil
}

// admin opens an admin client; close it with its Close.
func (e *Env) admin() (*kadm.Client, error) {
	cl, err := e.client()
	if err != nil {
		return nil, err
	}
	return kadm.NewClient(cl), nil
}

// withTimeout bounds an administrative command by the env's timeout.
func (e *Env) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.timeout())
}

// ErrorLines renders err for the terminal: one line per joined error, each
// with no newline inside.
func ErrorLines(err error) []string {
	if err == nil {
		return nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var lines []string
	for _, e := range errs {
		if e == nil {
			continue
		}
		if s := oneLine(e.Error()); s != "" {
			lines = append(lines, s)
		}
	}
	return lines
}

// deadline turns a context error into one that says what timed out.
func deadline(ctx context.Context, what string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return fmt.Errorf("%s: no answer from the brokers in time: %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
