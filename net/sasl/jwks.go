package sasl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// JWKSConfig says where the verification keys of signed OAUTHBEARER
// tokens come from (KIP-768's sasl.oauthbearer.jwks.endpoint.* keys).
type JWKSConfig struct {
	// URL is sasl.oauthbearer.jwks.endpoint.url: file:// (read once, at
	// start) or http:// or https:// (fetched at start and refreshed).
	URL string
	// Refresh is sasl.oauthbearer.jwks.endpoint.refresh.ms (default 1h);
	// RetryBackoff and RetryBackoffMax are ...retry.backoff.ms and
	// ...retry.backoff.max.ms (default 100ms and 10s): a failed fetch is
	// retried after RetryBackoff, doubling, until RetryBackoffMax has
	// passed since the first attempt.
	Refresh, RetryBackoff, RetryBackoffMax time.Duration
	// RootCAs verify an https endpoint's certificate; nil: the system's.
	RootCAs *x509.CertPool
	Logger  *slog.Logger
}

// Kafka's bounds on expedited refreshes (RefreshingHttpsJwks): a token
// naming an unknown key id asks for a refresh at most once a minute per
// id, for at most 16 ids, and ids longer than 1000 bytes never do.
const (
	missingKeyInterval = time.Minute
	missingKeyMax      = 16
	missingKeyMaxLen   = 1000
	maxJWKSBytes       = 1 << 20
	jwksFetchTimeout   = 30 * time.Second
)

// JWKS is a key set that tokens are verified with. An endpoint's set is
// refreshed every Refresh by its own goroutine, and soon after a token
// names a key id the set lacks (key rotation): that token is refused,
// the next after the refresh is not. Lookups never wait for the network.
type JWKS struct {
	cfg    JWKSConfig
	client *http.Client
	keys   atomic.Pointer[[]JWK]
	// Fetches is how many times the set was read (tests await refreshes).
	fetches atomic.Int64

	mu struct {
		sync.Mutex
		missing map[string]time.Time // key id -> when it may ask again
	}
	kick   chan struct{} // an expedited refresh is wanted
	cancel context.CancelFunc
	done   chan struct{} // closed when the refresher has returned
}

// OpenJWKS reads the key set, and for an endpoint starts refreshing it.
// A set that cannot be read is an error, as it stops Kafka's broker from
// starting.
func OpenJWKS(ctx context.Context, cfg JWKSConfig) (*JWKS, error) {
	if cfg.Refresh <= 0 {
		cfg.Refresh = time.Hour
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 100 * time.Millisecond
	}
	if cfg.RetryBackoffMax < cfg.RetryBackoff {
		cfg.RetryBackoffMax = max(cfg.RetryBackoff, 10*time.Second)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("JWKS endpoint URL %q: %w", cfg.URL, err)
	}
	k := &JWKS{cfg: cfg, kick: make(chan struct{}, 1), cancel: func() {}, done: make(chan struct{})}
	k.mu.missing = map[string]time.Time{}
	switch strings.ToLower(u.Scheme) {
	case "file":
		close(k.done) // read once, as Kafka's JwksFileVerificationKeyResolver does
		if err := k.readFile(u.Path); err != nil {
			return nil, err
		}
		return k, nil
	case "http", "https":
	default:
		return nil, fmt.Errorf("JWKS endpoint URL %q: only the http, https and file protocols are supported", cfg.URL)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}
	k.client = &http.Client{Transport: tr, Timeout: jwksFetchTimeout}
	if err := k.refresh(ctx); err != nil {
		return nil, err
	}
	var rctx context.Context
	rctx, k.cancel = context.WithCancel(context.Background())
	go k.run(rctx)
	return k, nil
}

// Close stops refreshing; it may be called more than once.
func (k *JWKS) Close() {
	k.cancel()
	<-k.done
	if k.client != nil {
		k.client.CloseIdleConnections()
	}
}

// Fetches is how many times the set has been read successfully.
func (k *JWKS) Fetches() int64 { return k.fetches.Load() }

// lookup returns the keys a token with key id kid may be verified with:
// those with that id, or every key for a token without one. A kid the
// set lacks asks for an expedited refresh.
func (k *JWKS) lookup(kid string) []JWK {
	keys := *k.keys.Load()
	if kid == "" {
		return keys
	}
	var out []JWK
	for _, key := range keys {
		if key.ID == kid {
			out = append(out, key)
		}
	}
	if len(out) == 0 {
		k.expedite(kid)
	}
	return out
}

// expedite asks the refresher for a refresh because of an unknown kid,
// within Kafka's bounds.
func (k *JWKS) expedite(kid string) {
	if k.client == nil || len(kid) > missingKeyMaxLen {
		return
	}
	now := time.Now()
	k.mu.Lock()
	if next, ok := k.mu.missing[kid]; ok && now.Before(next) {
		k.mu.Unlock()
		return
	}
	if len(k.mu.missing) >= missingKeyMax {
		oldest := ""
		for id, t := range k.mu.missing {
			if oldest == "" || t.Before(k.mu.missing[oldest]) {
				oldest = id
			}
		}
		delete(k.mu.missing, oldest)
	}
	k.mu.missing[kid] = now.Add(missingKeyInterval)
	k.mu.Unlock()
	select {
	case k.kick <- struct{}{}:
	default: // one is already wanted
	}
}

// run refreshes every Refresh and when expedited, until Close.
func (k *JWKS) run(ctx context.Context) {
	defer close(k.done)
	t := time.NewTicker(k.cfg.Refresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-k.kick:
		}
		if err := k.refresh(ctx); err != nil && ctx.Err() == nil {
			k.cfg.Logger.Warn("JWKS refresh failed; keeping the keys held", "url", k.cfg.URL, "err", err)
		}
	}
}

// refresh fetches the set, retrying with Kafka's backoff, and installs
// it.
func (k *JWKS) refresh(ctx context.Context) error {
	end := time.Now().Add(k.cfg.RetryBackoffMax)
	wait := k.cfg.RetryBackoff
	for attempt := 1; ; attempt++ {
		keys, err := k.fetch(ctx)
		if err == nil {
			k.install(keys)
			return nil
		}
		left := time.Until(end)
		if left <= 0 || ctx.Err() != nil {
			return fmt.Errorf("JWKS %s after %d attempts: %w", k.cfg.URL, attempt, err)
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("JWKS %s: %w", k.cfg.URL, ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
}

func (k *JWKS) fetch(ctx context.Context) ([]JWK, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.cfg.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP status %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("the key set is larger than %d bytes", maxJWKSBytes)
	}
	return k.parse(b)
}

// parse reads a fetched or read set, logging keys it skipped.
func (k *JWKS) parse(b []byte) ([]JWK, error) {
	keys, skipped, err := ParseJWKS(b)
	if err != nil {
		return nil, err
	}
	if skipped > 0 {
		k.cfg.Logger.Info("JWKS keys skipped: not RSA (2048 bits or more) or EC (P-256, P-384, P-521), or malformed", "url", k.cfg.URL, "skipped", skipped, "kept", len(keys))
	}
	return keys, nil
}

func (k *JWKS) readFile(path string) error {
	st, err := os.Stat(path)
	if err == nil && st.IsDir() {
		err = errors.New("is a directory, not a file")
	}
	if err != nil {
		return fmt.Errorf("JWKS file %s: %w", path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("JWKS file: %w", err)
	}
	keys, err := k.parse(b)
	if err != nil {
		return fmt.Errorf("JWKS file %s: %w", path, err)
	}
	k.install(keys)
	return nil
}

// install publishes a new set; the key ids it holds may ask for a
// refresh again as soon as they go missing.
func (k *JWKS) install(keys []JWK) {
	k.keys.Store(&keys)
	k.fetches.Add(1)
	k.mu.Lock()
	for _, key := range keys {
		delete(k.mu.missing, key.ID)
	}
	k.mu.Unlock()
}
