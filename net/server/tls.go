package server

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultTLSHandshakeTimeout bounds a TLS handshake on the acceptor side:
// a client that connects and sends nothing is closed after it.
const DefaultTLSHandshakeTimeout = 10 * time.Second

// TLSSettings are a listener's ssl.* settings, as Kafka names them, in
// the PEM forms kzero reads (ssl.keystore.type=PEM,
// ssl.truststore.type=PEM).
type TLSSettings struct {
	// KeystoreLocation is ssl.keystore.location: a PEM file holding the
	// certificate chain (leaf first) and the private key. Read again by
	// Reload.
	KeystoreLocation string
	// KeystoreChain and KeystoreKey are ssl.keystore.certificate.chain and
	// ssl.keystore.key: the same, inline (used when KeystoreLocation is
	// empty).
	KeystoreChain, KeystoreKey string
	// KeyPassword is ssl.key.password: the password of an encrypted
	// PKCS#8 key (PBES2: PBKDF2 with AES-CBC or DES-EDE3-CBC, as openssl
	// pkcs8 -topk8 -v2 writes). Unencrypted keys need none.
	KeyPassword string
	// TruststoreLocation is ssl.truststore.location, TruststoreCertificates
	// ssl.truststore.certificates: the CAs client certificates are verified
	// against (none: the system's).
	TruststoreLocation, TruststoreCertificates string
	// ClientAuth is ssl.client.auth: none (or ""), requested, required.
	ClientAuth string
	// Protocols is ssl.enabled.protocols (TLSv1.2, TLSv1.3); empty: both.
	Protocols []string
	// CipherSuites is ssl.cipher.suites (IANA names); empty: Go's
	// defaults. TLS 1.3 suites are accepted by name, but Go does not let
	// them be restricted.
	CipherSuites []string
	// PrincipalRules is ssl.principal.mapping.rules; empty: DEFAULT.
	PrincipalRules string
	// DisableKernelTLS keeps every connection on user-space TLS (kzero's
	// ssl.kernel.offload.enable=false): for comparison, and for kernels
	// where kTLS misbehaves.
	DisableKernelTLS bool
	// HandshakeTimeout bounds a handshake; 0: DefaultTLSHandshakeTimeout.
	HandshakeTimeout time.Duration
}

// TLS is a listener's loaded TLS configuration. Reload re-reads the
// keystore and truststore files; connections accepted afterwards use the
// new certificates, open ones keep theirs. Safe for concurrent use.
type TLS struct {
	settings TLSSettings
	rules    []principalRule
	current  atomic.Pointer[tls.Config]
}

// NewTLS loads s (the files it names are read now).
func NewTLS(s TLSSettings) (*TLS, error) {
	rules, err := parsePrincipalRules(s.PrincipalRules)
	if err != nil {
		return nil, fmt.Errorf("ssl.principal.mapping.rules: %w", err)
	}
	if s.HandshakeTimeout <= 0 {
		s.HandshakeTimeout = DefaultTLSHandshakeTimeout
	}
	t := &TLS{settings: s, rules: rules}
	if err := t.Reload(); err != nil {
		return nil, err
	}
	return t, nil
}

// Reload reads the keystore and truststore again and makes them the
// configuration of new connections. On error the current one stays.
func (t *TLS) Reload() error {
	cfg, err := t.settings.load()
	if err != nil {
		return err
	}
	t.current.Store(cfg)
	return nil
}

// Config is the crypto/tls server configuration new connections use now.
func (t *TLS) Config() *tls.Config { return t.current.Load() }

// Certificate is the leaf certificate new connections are served with.
func (t *TLS) Certificate() *x509.Certificate { return t.current.Load().Certificates[0].Leaf }

func (s *TLSSettings) load() (*tls.Config, error) {
	cert, err := s.keyPair()
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{cert},
		// Session tickets sent after a TLS 1.3 handshake would be records
		// under the application key before the kernel takes the
		// connection (kTLS counts records from the first it sends);
		// Kafka's clients do not resume sessions anyway.
		SessionTicketsDisabled: true,
	}
	if cfg.ClientCAs, err = s.truststore(); err != nil {
		return nil, err
	}
	switch strings.ToLower(s.ClientAuth) {
	case "", "none":
		cfg.ClientAuth = tls.NoClientCert
	case "requested":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "required":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("ssl.client.auth=%s: not none, requested or required", s.ClientAuth)
	}
	if cfg.MinVersion, cfg.MaxVersion, err = protocolRange(s.Protocols); err != nil {
		return nil, fmt.Errorf("ssl.enabled.protocols: %w", err)
	}
	if cfg.CipherSuites, err = cipherSuites(s.CipherSuites); err != nil {
		return nil, fmt.Errorf("ssl.cipher.suites: %w", err)
	}
	return cfg, nil
}

// ClientConfig is the crypto/tls configuration of a client that dials
// another node with these settings, as Kafka's inter-broker and
// controller clients use the listener's own ssl.* settings: the
// truststore verifies the server (none: the system's CAs), the keystore,
// when there is one, is the client's certificate, and the protocols and
// cipher suites are the listener's. The caller sets ServerName to the
// host it dials (ssl.endpoint.identification.algorithm=https, Kafka's
// default, checks it).
func (s TLSSettings) ClientConfig() (*tls.Config, error) {
	cfg := &tls.Config{}
	if s.KeystoreLocation != "" || s.KeystoreChain != "" {
		cert, err := s.keyPair()
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	var err error
	if cfg.RootCAs, err = s.truststore(); err != nil {
		return nil, err
	}
	if cfg.MinVersion, cfg.MaxVersion, err = protocolRange(s.Protocols); err != nil {
		return nil, fmt.Errorf("ssl.enabled.protocols: %w", err)
	}
	if cfg.CipherSuites, err = cipherSuites(s.CipherSuites); err != nil {
		return nil, fmt.Errorf("ssl.cipher.suites: %w", err)
	}
	return cfg, nil
}

// keyPair reads the keystore: the chain and the key from one PEM file or
// from the inline values.
func (s *TLSSettings) keyPair() (tls.Certificate, error) {
	chain, key, where := s.KeystoreChain, s.KeystoreKey, "ssl.keystore.certificate.chain/ssl.keystore.key"
	if s.KeystoreLocation != "" {
		b, err := os.ReadFile(s.KeystoreLocation)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("ssl.keystore.location: %w", err)
		}
		chain, key, where = string(b), string(b), "ssl.keystore.location "+s.KeystoreLocation
	}
	if chain == "" {
		return tls.Certificate{}, fmt.Errorf("no keystore: set ssl.keystore.location or ssl.keystore.certificate.chain and ssl.keystore.key")
	}
	certs, err := parsePEM(chain)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: %w", where, err)
	}
	keys, err := parsePEM(key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: %w", where, err)
	}
	var certPEM, keyPEM bytes.Buffer
	for _, b := range certs {
		if b.typ == "CERTIFICATE" {
			writePEM(&certPEM, b)
		}
	}
	for _, b := range keys {
		switch b.typ {
		case "ENCRYPTED PRIVATE KEY":
			if s.KeyPassword == "" {
				return tls.Certificate{}, fmt.Errorf("%s: the private key is encrypted and ssl.key.password is not set", where)
			}
			der, err := decryptPKCS8(b.der, s.KeyPassword)
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("%s: %w", where, err)
			}
			writePEM(&keyPEM, pemBlock{typ: "PRIVATE KEY", der: der})
		case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY":
			writePEM(&keyPEM, b)
		}
	}
	if certPEM.Len() == 0 {
		return tls.Certificate{}, fmt.Errorf("%s: no CERTIFICATE", where)
	}
	if keyPEM.Len() == 0 {
		return tls.Certificate{}, fmt.Errorf("%s: no PRIVATE KEY", where)
	}
	cert, err := tls.X509KeyPair(certPEM.Bytes(), keyPEM.Bytes())
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: %w", where, err)
	}
	return cert, nil
}

// truststore is the pool client certificates are verified against; nil:
// the system's.
func (s *TLSSettings) truststore() (*x509.CertPool, error) {
	src, where := s.TruststoreCertificates, "ssl.truststore.certificates"
	if s.TruststoreLocation != "" {
		b, err := os.ReadFile(s.TruststoreLocation)
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.location: %w", err)
		}
		src, where = string(b), "ssl.truststore.location "+s.TruststoreLocation
	}
	if src == "" {
		return nil, nil
	}
	blocks, err := parsePEM(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	pool, n := x509.NewCertPool(), 0
	for _, b := range blocks {
		if b.typ != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.der)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no CERTIFICATE", where)
	}
	return pool, nil
}

// protocolRange turns ssl.enabled.protocols into crypto/tls's bounds.
func protocolRange(names []string) (lo, hi uint16, err error) {
	if len(names) == 0 {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	for _, n := range names {
		var v uint16
		switch n {
		case "TLSv1.2":
			v = tls.VersionTLS12
		case "TLSv1.3":
			v = tls.VersionTLS13
		default:
			return 0, 0, fmt.Errorf("%s: kzero serves TLSv1.2 and TLSv1.3", n)
		}
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return lo, hi, nil
}

// cipherSuites turns ssl.cipher.suites into crypto/tls ids. TLS 1.3
// suites are accepted (Go serves all three and cannot restrict them);
// Go's insecure suites are refused.
func cipherSuites(names []string) ([]uint16, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var ids []uint16
	for _, n := range names {
		i := slices.IndexFunc(tls.CipherSuites(), func(c *tls.CipherSuite) bool { return c.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("%s is not a cipher suite Go serves (IANA names, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)", n)
		}
		c := tls.CipherSuites()[i]
		if !slices.Equal(c.SupportedVersions, []uint16{tls.VersionTLS13}) {
			ids = append(ids, c.ID)
		}
	}
	return ids, nil
}

// pemBlock is one PEM block: its type and decoded bytes.
type pemBlock struct {
	typ string
	der []byte
}

var pemRE = regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]+)-----([^-]*)-----END ([A-Z0-9 ]+)-----`)

// parsePEM reads PEM blocks as Kafka's PEM keystores do: the base64 body
// may be spread over lines or given on one (a properties value), white
// space anywhere in it is dropped. Headers (legacy encrypted PEM) are
// refused.
func parsePEM(s string) ([]pemBlock, error) {
	if strings.Contains(s, "Proc-Type:") {
		return nil, fmt.Errorf("a legacy encrypted PEM key (Proc-Type header) is not read; convert it to PKCS#8 (openssl pkcs8 -topk8 -v2 aes-256-cbc)")
	}
	var out []pemBlock
	for _, m := range pemRE.FindAllStringSubmatch(s, -1) {
		if m[1] != m[3] {
			return nil, fmt.Errorf("PEM block BEGIN %s ends with END %s", m[1], m[3])
		}
		body := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\\' {
				return -1
			}
			return r
		}, m[2])
		der, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			return nil, fmt.Errorf("PEM block %s: %w (headers such as Proc-Type are not read)", m[1], err)
		}
		out = append(out, pemBlock{typ: m[1], der: der})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no PEM block")
	}
	return out, nil
}

func writePEM(w *bytes.Buffer, b pemBlock) {
	w.WriteString("-----BEGIN " + b.typ + "-----\n")
	enc := base64.StdEncoding.EncodeToString(b.der)
	for len(enc) > 64 {
		w.WriteString(enc[:64] + "\n")
		enc = enc[64:]
	}
	w.WriteString(enc + "\n-----END " + b.typ + "-----\n")
}
