package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"slices"
	"strings"

	franzsasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"kzero/coord/raftnet"
	"kzero/net/api"
	"kzero/net/sasl"
	"kzero/net/server"
	"kzero/net/wire"
	"kzero/node"
)

// interBrokerListener is the listener other brokers reach this one
// through: inter.broker.listener.name, or the listener named after
// security.inter.broker.protocol (Kafka's older key: a listener called
// SSL for SSL, ...); "" leaves it to the first PLAINTEXT listener.
// security() refuses both at once, as Kafka does.
func (c *brokerConfig) interBrokerListener() string {
	if n := c.str("inter.broker.listener.name"); n != "" {
		return n
	}
	return c.str("security.inter.broker.protocol")
}

// interBroker is how this node's clients of other brokers (replica
// fetchers, peer requests) connect through inter.broker.listener.name:
// TLS with the listener's own ssl.* settings (its truststore verifies the
// other broker, its keystore is this node's client certificate) on SSL
// and SASL_SSL; on SASL_PLAINTEXT and SASL_SSL, the mechanism
// sasl.mechanism.inter.broker.protocol (PLAIN, SCRAM-SHA-256 or
// SCRAM-SHA-512) with the username and password of the listener's JAAS
// entry for it, as Kafka's inter-broker client reads them. nil: PLAINTEXT.
func (c *brokerConfig) interBroker(listeners []node.Listener) (*wire.Dialer, error) {
	name := c.interBrokerListener()
	i := slices.IndexFunc(listeners, func(l node.Listener) bool { return l.Name == name })
	if name == "" || i < 0 {
		return nil, nil // security() checked the name; the default is a PLAINTEXT listener
	}
	l := listeners[i]
	d := &wire.Dialer{}
	if l.TLS != nil {
		cfg, err := c.clientTLS(l.Name)
		if err != nil {
			return nil, fmt.Errorf("inter.broker.listener.name=%s: %w", name, err)
		}
		d.TLS = cfg
	}
	if l.SecurityProtocol == api.ProtocolSaslPlaintext || l.SecurityProtocol == api.ProtocolSaslSSL {
		m, err := c.interBrokerSASL(l)
		if err != nil {
			return nil, err
		}
		d.SASL = m
	}
	if d.TLS == nil && d.SASL == nil {
		return nil, nil
	}
	return d, nil
}

// clientTLS is the client side of a listener's TLS: its truststore, its
// keystore as the client certificate, its protocols and suites.
// ssl.endpoint.identification.algorithm empty turns off the host name
// check (the chain is still verified), as in Kafka.
func (c *brokerConfig) clientTLS(listener string) (*tls.Config, error) {
	v := func(name string) string { return c.sslValue(listener, name) }
	cfg, err := server.TLSSettings{
		KeystoreLocation:       v("ssl.keystore.location"),
		KeystoreChain:          v("ssl.keystore.certificate.chain"),
		KeystoreKey:            v("ssl.keystore.key"),
		KeyPassword:            v("ssl.key.password"),
		TruststoreLocation:     v("ssl.truststore.location"),
		TruststoreCertificates: v("ssl.truststore.certificates"),
		Protocols:              splitList(v("ssl.enabled.protocols")),
		CipherSuites:           splitList(v("ssl.cipher.suites")),
	}.ClientConfig()
	if err != nil {
		return nil, err
	}
	switch alg := strings.ToLower(v("ssl.endpoint.identification.algorithm")); alg {
	case "https":
	case "":
		skipHostnameCheck(cfg)
	default:
		return nil, fmt.Errorf("ssl.endpoint.identification.algorithm=%s: not https or empty", alg)
	}
	return cfg, nil
}

// skipHostnameCheck verifies the server's chain against cfg's roots but
// not its name.
func skipHostnameCheck(cfg *tls.Config) {
	roots := cfg.RootCAs
	cfg.InsecureSkipVerify = true
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return fmt.Errorf("the server sent no certificate")
		}
		opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
		for _, ic := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(ic)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		return err
	}
}

// interBrokerSASL is the SASL client of the inter-broker listener l.
func (c *brokerConfig) interBrokerSASL(l node.Listener) (wire.Mechanism, error) {
	mech := c.str("sasl.mechanism.inter.broker.protocol")
	if !slices.Contains(l.Mechanisms, mech) {
		return nil, fmt.Errorf("sasl.mechanism.inter.broker.protocol=%s is not enabled on the inter-broker listener %s (%s)", mech, l.Name, strings.Join(l.Mechanisms, ","))
	}
	user, pass, key, err := c.jaasLogin(l.Name, mech)
	if err != nil {
		return nil, err
	}
	if user == "" {
		return nil, fmt.Errorf("the inter-broker listener %s authenticates with %s, but %s names no username and password for the broker", l.Name, mech, key)
	}
	var m franzsasl.Mechanism
	switch mech {
	case sasl.Plain:
		m = plain.Auth{User: user, Pass: pass}.AsMechanism()
	case sasl.ScramSHA256:
		m = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
	case sasl.ScramSHA512:
		m = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
	default:
		return nil, fmt.Errorf("sasl.mechanism.inter.broker.protocol=%s: kzero's inter-broker client speaks PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512", mech)
	}
	return franzMechanism{m}, nil
}

// jaasLogin is the username and password this node logs in with on
// listener with mechanism: the username and password options of the
// listener's JAAS config for it (key, as jaasKey finds it); "" when
// there are none.
func (c *brokerConfig) jaasLogin(listener, mech string) (user, pass, key string, err error) {
	key = c.jaasKey("listener.name."+strings.ToLower(listener)+".", strings.ToLower(mech))
	if !c.has(key) {
		return "", "", key, nil
	}
	mods, err := sasl.ParseJAAS(c.str(key))
	if err != nil {
		return "", "", key, fmt.Errorf("%s: %w", key, err)
	}
	for _, m := range mods {
		if u, ok := m.Options["username"]; ok {
			user, pass = u, m.Options["password"]
		}
	}
	return user, pass, key, nil
}

// franzMechanism adapts a franz-go SASL client mechanism to wire's.
type franzMechanism struct{ m franzsasl.Mechanism }

func (f franzMechanism) Name() string { return f.m.Name() }

func (f franzMechanism) Authenticate(ctx context.Context, host string) (wire.Session, []byte, error) {
	s, first, err := f.m.Authenticate(ctx, host)
	if err != nil {
		return nil, nil, err
	}
	return s, first, nil
}

// controllerTLS is the controller listener's TLS when its protocol is SSL
// or SASL_SSL (controller.listener.names' first, its protocol from
// listener.security.protocol.map): the server side on a node that has
// the listener, and on every node the client side it dials controllers
// with. nil, nil for PLAINTEXT and SASL_PLAINTEXT. controllerSASL is the
// SASL side.
func (c *brokerConfig) controllerTLS() (*server.TLS, *tls.Config, error) {
	name, proto, has, err := c.controllerListenerProtocol()
	if err != nil || (proto != "SSL" && proto != "SASL_SSL") {
		return nil, nil, err
	}
	client, err := c.clientTLS(name)
	if err != nil {
		return nil, nil, fmt.Errorf("controller listener %s: %w", name, err)
	}
	if !has {
		return nil, client, nil // broker-only: it only dials the controllers
	}
	nl := node.Listener{Listener: api.Listener{Name: name, SecurityProtocol: protocolID(proto)}}
	if err := c.sslListener(&nl); err != nil {
		return nil, nil, err
	}
	return nl.TLS, client, nil
}

// controllerListenerProtocol is the controller listener's name
// (controller.listener.names' first, "" for none), its security protocol,
// and whether this node has it (in listeners: not a broker-only node).
func (c *brokerConfig) controllerListenerProtocol() (name, proto string, has bool, err error) {
	names := c.controllerListenerNames()
	if len(names) == 0 {
		return "", "", false, nil
	}
	name = names[0]
	if proto, err = c.protocolOf(name); err != nil {
		return "", "", false, err
	}
	ls, err := c.listeners()
	if err != nil {
		return "", "", false, err
	}
	return name, proto, slices.ContainsFunc(ls, func(l listener) bool { return l.name == name }), nil
}

// controllerSASL is the controller listener's SASL when its protocol is
// SASL_PLAINTEXT or SASL_SSL: on a node that has the listener, the
// mechanisms it accepts (listener.name.<l>.sasl.enabled.mechanisms, else
// sasl.enabled.mechanisms), which must include
// sasl.mechanism.controller.protocol, as Kafka requires; on every node,
// the client mechanism it dials controllers with:
// sasl.mechanism.controller.protocol with the username and password of
// the listener's JAAS config for it.
//
// The controller listener takes PLAIN only. SCRAM credentials live in the
// metadata log, which the controllers can read only once their quorum
// has formed over this very listener (Kafka bootstraps them at format
// time, KIP-900: kzero has no such step); OAUTHBEARER would need a token
// provider on every node. A controller's peer is accepted once it
// authenticated, whatever its user: every user of the listener's JAAS
// config is a controller or broker of the cluster (Kafka would also
// require the principal to be a super user for its controller APIs;
// the raft transport has no other API to guard).
func (c *brokerConfig) controllerSASL() (map[string]func() sasl.Exchange, raftnet.ClientMechanism, error) {
	name, proto, has, err := c.controllerListenerProtocol()
	if err != nil || (proto != "SASL_PLAINTEXT" && proto != "SASL_SSL") {
		return nil, nil, err
	}
	refuse := func(what, mech string) error {
		switch mech {
		case sasl.ScramSHA256, sasl.ScramSHA512:
			return fmt.Errorf("%s: %s on the controller listener %s: SCRAM credentials live in the metadata log, which the controllers cannot read before their quorum forms over this listener; use PLAIN", what, mech, name)
		case sasl.OAuthBearer:
			return fmt.Errorf("%s: %s on the controller listener %s: kzero's controllers log in with PLAIN only", what, mech, name)
		}
		return fmt.Errorf("%s: %s on the controller listener %s: kzero's raft transport authenticates with PLAIN only", what, mech, name)
	}
	mech := c.str("sasl.mechanism.controller.protocol")
	if mech != sasl.Plain {
		return nil, nil, refuse("sasl.mechanism.controller.protocol", mech)
	}
	user, pass, key, err := c.jaasLogin(name, mech)
	if err != nil {
		return nil, nil, err
	}
	if user == "" {
		return nil, nil, fmt.Errorf("the controller listener %s authenticates with %s, but %s names no username and password for this node", name, mech, key)
	}
	client := plain.Auth{User: user, Pass: pass}.AsMechanism()
	if !has {
		return nil, client, nil // broker-only: it only dials the controllers
	}
	nl := node.Listener{Listener: api.Listener{Name: name, SecurityProtocol: protocolID(proto)}}
	if err := c.saslListener(&nl); err != nil {
		return nil, nil, err
	}
	for _, m := range nl.Mechanisms {
		if m != sasl.Plain {
			return nil, nil, refuse("sasl.enabled.mechanisms", m)
		}
	}
	if !slices.Contains(nl.Mechanisms, mech) {
		return nil, nil, fmt.Errorf("sasl.mechanism.controller.protocol=%s is not enabled on the controller listener %s (%s)", mech, name, strings.Join(nl.Mechanisms, ","))
	}
	users := sasl.PlainUsers(nl.PlainUsers)
	return map[string]func() sasl.Exchange{sasl.Plain: func() sasl.Exchange { return sasl.NewPlain(users) }}, client, nil
}

// protocolOf is a listener name's security protocol
// (listener.security.protocol.map; a name that is a protocol maps to
// itself, CONTROLLER to PLAINTEXT).
func (c *brokerConfig) protocolOf(name string) (string, error) {
	p := map[string]string{"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL", "CONTROLLER": "PLAINTEXT"}[name]
	for _, kv := range splitList(c.str("listener.security.protocol.map")) {
		n, proto, ok := strings.Cut(kv, ":")
		if !ok {
			return "", fmt.Errorf("listener.security.protocol.map: %q is not NAME:PROTOCOL", kv)
		}
		if strings.TrimSpace(n) == name {
			p = strings.TrimSpace(proto)
		}
	}
	if p == "" {
		return "", fmt.Errorf("listener %s: no security protocol for it in listener.security.protocol.map", name)
	}
	return p, nil
}
