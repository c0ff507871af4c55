package main

import (
	"fmt"
	"log/slog"
	"strings"

	"kzero/net/api"
	"kzero/net/server"
	"kzero/node"
)

// sslKeys are the ssl.* keys kzero reads, with Kafka's defaults; each may
// also be set for one listener as listener.name.<listener>.ssl.* (the
// listener name in lower case), which wins.
var sslKeys = []key{
	{name: "ssl.keystore.type", def: "PEM", kind: kString},
	{name: "ssl.keystore.location", kind: kString},
	{name: "ssl.keystore.password", kind: kString}, // a PEM keystore has none
	{name: "ssl.keystore.certificate.chain", kind: kString},
	{name: "ssl.keystore.key", kind: kString},
	{name: "ssl.key.password", kind: kString},
	{name: "ssl.truststore.type", def: "PEM", kind: kString},
	{name: "ssl.truststore.location", kind: kString},
	{name: "ssl.truststore.password", kind: kString}, // a PEM truststore has none
	{name: "ssl.truststore.certificates", kind: kString},
	{name: "ssl.client.auth", def: "none", kind: kString}, // SSL listeners; SASL_SSL only with the listener prefix (KIP-684)
	{name: "ssl.enabled.protocols", def: "TLSv1.2,TLSv1.3", kind: kList},
	{name: "ssl.protocol", def: "TLSv1.3", kind: kString}, // Java's SSLContext protocol; ssl.enabled.protocols decides
	{name: "ssl.cipher.suites", kind: kList},
	{name: "ssl.principal.mapping.rules", def: "DEFAULT", kind: kString},
	{name: "ssl.endpoint.identification.algorithm", def: "https", kind: kString}, // kzero's inter-broker and controller clients: https checks the host name
	// kzero: hand TLS records to the kernel (kTLS) so fetches keep
	// sendfile; false serves every connection through user-space TLS.
	{name: "ssl.kernel.offload.enable", def: "true", kind: kBool},
}

func init() {
	for _, k := range sslKeys {
		keys[k.name] = k
		listenerSuffixes = append(listenerSuffixes, "."+k.name)
	}
}

// sslValue is a listener's value of an ssl.* key: its own, else the
// broker-wide one.
func (c *brokerConfig) sslValue(listener, name string) string {
	if k := "listener.name." + strings.ToLower(listener) + "." + name; c.has(k) {
		return strings.TrimSpace(c.props[k])
	}
	return c.str(name)
}

// sslListener loads an SSL or SASL_SSL listener's keystore, truststore and
// TLS settings.
func (c *brokerConfig) sslListener(l *node.Listener) error {
	v := func(name string) string { return c.sslValue(l.Name, name) }
	for _, typ := range []string{"ssl.keystore.type", "ssl.truststore.type"} {
		if t := v(typ); !strings.EqualFold(t, "PEM") {
			return fmt.Errorf("listener %s: %s=%s: kzero reads PEM stores only (convert with keytool -importkeystore and openssl)", l.Name, typ, t)
		}
	}
	offload := v("ssl.kernel.offload.enable")
	if err := (key{kind: kBool}).check(offload); err != nil {
		return fmt.Errorf("listener %s: ssl.kernel.offload.enable=%s: %w", l.Name, offload, err)
	}
	set := server.TLSSettings{
		KeystoreLocation:       v("ssl.keystore.location"),
		KeystoreChain:          v("ssl.keystore.certificate.chain"),
		KeystoreKey:            v("ssl.keystore.key"),
		KeyPassword:            v("ssl.key.password"),
		TruststoreLocation:     v("ssl.truststore.location"),
		TruststoreCertificates: v("ssl.truststore.certificates"),
		ClientAuth:             v("ssl.client.auth"),
		Protocols:              splitList(v("ssl.enabled.protocols")),
		CipherSuites:           splitList(v("ssl.cipher.suites")),
		PrincipalRules:         v("ssl.principal.mapping.rules"),
		DisableKernelTLS:       strings.EqualFold(offload, "false"),
	}
	if l.SecurityProtocol == api.ProtocolSaslSSL {
		// KIP-684: a SASL_SSL listener asks for client certificates only
		// when its own listener.name.<l>.ssl.client.auth says so; SASL
		// authenticates its clients.
		set.ClientAuth = ""
		if k := "listener.name." + strings.ToLower(l.Name) + ".ssl.client.auth"; c.has(k) {
			set.ClientAuth = strings.TrimSpace(c.props[k])
		}
	}
	t, err := server.NewTLS(set)
	if err != nil {
		return fmt.Errorf("listener %s: %w", l.Name, err)
	}
	l.TLS = t
	return nil
}

// reloadTLS reads the TLS listeners' keystores and truststores again
// (SIGHUP): new connections get the new certificates, open ones keep
// theirs. A listener whose files do not load keeps its current ones.
func reloadTLS(listeners []node.Listener, logger *slog.Logger) {
	for _, l := range listeners {
		if l.TLS == nil {
			continue
		}
		if err := l.TLS.Reload(); err != nil {
			logger.Error("TLS certificates not reloaded; the listener keeps its current ones", "listener", l.Name, "err", err)
			continue
		}
		logger.Info("TLS certificates reloaded", "listener", l.Name, "subject", l.TLS.Certificate().Subject.String(),
			"not_after", l.TLS.Certificate().NotAfter)
	}
}

// controllerProtocols checks the controller listener: its TLS
// (controllerTLS) and its SASL (controllerSASL) must load.
func (c *brokerConfig) controllerProtocols() error {
	if _, _, err := c.controllerTLS(); err != nil {
		return err
	}
	_, _, err := c.controllerSASL()
	return err
}
