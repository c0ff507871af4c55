package tools

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
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

	// TLS, when set, dials every broker with it; SASL, when set,
	// authenticates every connection with it. ConnectOptions.Apply fills
	// both from kzctl's flags.
	TLS  *tls.Config
	SASL sasl.Mechanism

	// Progress receives the progress bars of long operations (kzctl
	// passes stderr). A bar is drawn only when Progress is a terminal,
	// and for commands that stream their output only when Out is not one
	// too, so a bar never mixes with output or lands in a pipe.
	Progress io.Writer
	// forceProgress draws bars whatever Progress is: tests use it.
	forceProgress bool
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
	if e.TLS != nil {
		base = append(base, kgo.DialTLSConfig(e.TLS))
	}
	if e.SASL != nil {
		base = append(base, kgo.SASL(e.SASL))
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

// adminSession is an admin client and ctx bounded by the env's timeout,
// for one administrative command; done closes both.
func (e *Env) adminSession(ctx context.Context) (*kadm.Client, context.Context, func(), error) {
	adm, err := e.admin()
	if err != nil {
		return nil, ctx, nil, err
	}
	ctx, cancel := e.withTimeout(ctx)
	return adm, ctx, func() { cancel(); adm.Close() }, nil
}

// withTimeout bounds an administrative command by the env's timeout.
func (e *Env) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.timeout())
}

// ErrorLines renders err for the terminal: one line per joined error (joins
// inside joins included), each with no newline inside.
func ErrorLines(err error) []string {
	if err == nil {
		return nil
	}
	if errs := joined(err); errs != nil {
		var lines []string
		for _, e := range errs {
			lines = append(lines, ErrorLines(e)...)
		}
		return lines
	}
	if s := oneLine(err.Error()); s != "" {
		return []string{s}
	}
	return nil
}

// joined returns the errors errors.Join joined into err, nil if err is not
// such a join. fmt.Errorf with several %w also unwraps to a list, but its
// message is its own, not its parts' one per line.
func joined(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	errs := j.Unwrap()
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		if e != nil {
			msgs = append(msgs, e.Error())
		}
	}
	if err.Error() != strings.Join(msgs, "\n") {
		return nil
	}
	return errs
}

// deadline turns a context error into one that says what timed out.
func deadline(ctx context.Context, what string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return fmt.Errorf("%s: no answer from the brokers in time: %w", what, err)
	}
	if errors.Is(err, io.EOF) {
		// What a broker does to a client that fails SASL (or sends
		// none, or plaintext to a TLS listener) before it answers.
		return fmt.Errorf("%s: the broker closed the connection (wrong --tls or --sasl settings?): %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
