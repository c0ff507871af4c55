package tools

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// ConnectOptions are how kzctl reaches a broker that wants TLS or SASL: the
// flags common to every command that talks to one, as kafka's tools take
// them from a client properties file (security.protocol SSL/SASL_SSL/
// SASL_PLAINTEXT, ssl.truststore, ssl.keystore, sasl.mechanism and
// sasl.jaas.config).
type ConnectOptions struct {
	// TLS dials with TLS; CAFile, CertFile, KeyFile and
	// InsecureSkipVerify imply it.
	TLS bool
	// CAFile holds PEM certificates that sign the brokers' certificates,
	// trusted instead of the system's roots.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and its key, for
	// brokers that ask for one (ssl.client.auth); both or neither.
	CertFile, KeyFile string
	// InsecureSkipVerify accepts any broker certificate: for tests only.
	InsecureSkipVerify bool

	// SASLMechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (any case);
	// empty is no SASL. SASLUser and SASLPassword are its credentials.
	SASLMechanism string
	SASLUser      string
	SASLPassword  string
}

// Apply checks the options and sets env.TLS and env.SASL from them. A
// mistake in the options (an unknown mechanism, a key without its
// certificate) is a usage error; a file that cannot be read or parsed is
// an error naming the file.
func (o *ConnectOptions) Apply(env *Env) error {
	cfg, err := o.tlsConfig()
	if err != nil {
		return err
	}
	mech, err := o.mechanism()
	if err != nil {
		return err
	}
	env.TLS, env.SASL = cfg, mech
	return nil
}

// tlsConfig is the client TLS config, nil without TLS.
func (o *ConnectOptions) tlsConfig() (*tls.Config, error) {
	if !o.TLS && o.CAFile == "" && o.CertFile == "" && o.KeyFile == "" && !o.InsecureSkipVerify {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls ca %s: no PEM certificate in the file", o.CAFile)
		}
		cfg.RootCAs = pool
	}
	switch {
	case (o.CertFile == "") != (o.KeyFile == ""):
		return nil, usagef("tls: --tls-cert and --tls-key go together")
	case o.CertFile != "":
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls client certificate %s, key %s: %w", o.CertFile, o.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// mechanism is the SASL mechanism with its credentials, nil without SASL.
func (o *ConnectOptions) mechanism() (sasl.Mechanism, error) {
	name := strings.ToUpper(o.SASLMechanism)
	if name == "" {
		if o.SASLUser != "" {
			return nil, usagef("sasl: --sasl-user without --sasl-mechanism")
		}
		return nil, nil
	}
	if o.SASLUser == "" {
		return nil, usagef("sasl %s: no --sasl-user", name)
	}
	user, pass := o.SASLUser, o.SASLPassword
	switch name {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	}
	return nil, usagef("sasl mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", o.SASLMechanism)
}
