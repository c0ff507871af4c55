package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"kzero/net/api"
	"kzero/net/sasl"
	"kzero/net/server"
	"kzero/node"
)

// The per-listener keys kzero reads (Kafka's listener prefix: the listener
// name in lower case, and for a JAAS config the mechanism in lower case):
//
//	listener.name.<listener>.sasl.enabled.mechanisms
//	listener.name.<listener>.<mechanism>.sasl.jaas.config
//	listener.name.<listener>.ssl.* (ssl.go)
//	listener.name.<listener>.max.connections (connlimits.go)
//	listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class
//	listener.name.<listener>.[oauthbearer.]sasl.oauthbearer.* (oauthKeys)
var listenerSuffixes = append([]string{".sasl.enabled.mechanisms", ".sasl.jaas.config", ".max.connections",
	".oauthbearer.sasl.server.callback.handler.class"}, oauthKeySuffixes()...)

// oauthKeySuffixes are the sasl.oauthbearer.* keys as listener suffixes.
func oauthKeySuffixes() []string {
	var out []string
	for _, k := range oauthKeys {
		out = append(out, "."+k)
	}
	return out
}

// listenerKey reports whether name is a listener.name.* key kzero reads.
func listenerKey(name string) bool {
	rest, ok := strings.CutPrefix(name, "listener.name.")
	if !ok {
		return false
	}
	for _, s := range listenerSuffixes {
		if strings.HasSuffix(rest, s) && len(rest) > len(s) {
			return true
		}
	}
	return false
}

// protocolID is Kafka's id of a security protocol.
func protocolID(p string) int16 {
	switch p {
	case "SSL":
		return api.ProtocolSSL
	case "SASL_PLAINTEXT":
		return api.ProtocolSaslPlaintext
	case "SASL_SSL":
		return api.ProtocolSaslSSL
	}
	return api.ProtocolPlaintext
}

// servedMechanisms are the SASL mechanisms kzero serves.
var servedMechanisms = []string{sasl.Plain, sasl.ScramSHA256, sasl.ScramSHA512, sasl.OAuthBearer}

// security builds the client listeners' node configuration: addresses,
// advertised addresses, protocols, SASL mechanisms and PLAIN users. It
// refuses a SASL listener with a mechanism kzero does not serve (GSSAPI,
// Kafka's default), PLAIN without a JAAS config naming users, an SSL
// listener whose keystore does not load (ssl.go), and an inter-broker
// listener kzero's own clients cannot reach (interbroker.go).
func (c *brokerConfig) security(client []listener) ([]node.Listener, error) {
	adv, err := c.advertisedListeners(client)
	if err != nil {
		return nil, fmt.Errorf("advertised.listeners: %w", err)
	}
	var out []node.Listener
	for _, l := range client {
		nl := node.Listener{Listener: api.Listener{Name: l.name, SecurityProtocol: protocolID(l.protocol)}, Addr: l.addr, Advertised: adv[l.name]}
		if l.protocol == "SASL_PLAINTEXT" || l.protocol == "SASL_SSL" {
			if err := c.saslListener(&nl); err != nil {
				return nil, err
			}
		}
		if l.protocol == "SSL" || l.protocol == "SASL_SSL" {
			if err := c.sslListener(&nl); err != nil {
				return nil, err
			}
		}
		out = append(out, nl)
	}
	if err := c.controllerProtocols(); err != nil {
		return nil, err
	}
	if c.has("inter.broker.listener.name") && c.has("security.inter.broker.protocol") {
		return nil, fmt.Errorf("only one of inter.broker.listener.name and security.inter.broker.protocol should be set")
	}
	if ib := c.interBrokerListener(); ib != "" {
		if !slices.ContainsFunc(out, func(l node.Listener) bool { return l.Name == ib }) {
			return nil, fmt.Errorf("inter.broker.listener.name=%s is not a client listener of listeners", ib)
		}
		if _, err := c.interBroker(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// saslListener reads a SASL listener's mechanisms and PLAIN users.
func (c *brokerConfig) saslListener(nl *node.Listener) error {
	l := &nl.Listener
	prefix := "listener.name." + strings.ToLower(l.Name) + "."
	mechKey := prefix + "sasl.enabled.mechanisms"
	if !c.has(mechKey) {
		mechKey = "sasl.enabled.mechanisms"
	}
	l.Mechanisms = splitList(c.str(mechKey))
	if len(l.Mechanisms) == 0 {
		return fmt.Errorf("%s: listener %s has no SASL mechanism", mechKey, l.Name)
	}
	for _, m := range l.Mechanisms {
		if !slices.Contains(servedMechanisms, m) {
			return fmt.Errorf("%s: %s is not served by kzero (it serves %s) on listener %s", mechKey, m, strings.Join(servedMechanisms, ", "), l.Name)
		}
	}
	if slices.Contains(l.Mechanisms, sasl.OAuthBearer) {
		if err := c.oauthListener(nl, prefix); err != nil {
			return err
		}
	}
	if !slices.Contains(l.Mechanisms, sasl.Plain) {
		return nil
	}
	jaasKey := c.jaasKey(prefix, "plain")
	if !c.has(jaasKey) {
		return fmt.Errorf("listener %s enables PLAIN but neither listener.name.%s.plain.sasl.jaas.config nor sasl.jaas.config names its users",
			l.Name, strings.ToLower(l.Name))
	}
	mods, err := sasl.ParseJAAS(c.str(jaasKey))
	if err != nil {
		return fmt.Errorf("%s: %w", jaasKey, err)
	}
	l.PlainUsers = sasl.PlainUsersFromJAAS(mods)
	return nil
}

// standardAuthorizer is the authorizer.class.name kzero serves: Kafka's
// KRaft authorizer, with ACLs in the metadata log.
const standardAuthorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

// authorizer reads authorizer.class.name, super.users (principals separated
// by ';') and allow.everyone.if.no.acl.found; nil when no authorizer is
// configured.
func (c *brokerConfig) authorizer() (*api.AuthorizerConfig, error) {
	switch name := c.str("authorizer.class.name"); name {
	case "":
		return nil, nil
	case standardAuthorizer, "kafka.security.authorizer.AclAuthorizer":
	default:
		return nil, fmt.Errorf("authorizer.class.name=%s: kzero serves %s only", name, standardAuthorizer)
	}
	a := &api.AuthorizerConfig{AllowIfNoACL: c.bool("allow.everyone.if.no.acl.found")}
	for _, p := range strings.Split(c.str("super.users"), ";") {
		if p = strings.TrimSpace(p); p != "" {
			if typ, name, ok := strings.Cut(p, ":"); !ok || typ == "" || name == "" {
				return nil, fmt.Errorf("super.users: %q is not a principal (User:name)", p)
			}
			a.SuperUsers = append(a.SuperUsers, p)
		}
	}
	return a, nil
}

// jaasKey is the key of a listener's JAAS config for a mechanism: the
// listener's own (listener.name.<l>.<mechanism>.sasl.jaas.config) or
// sasl.jaas.config.
func (c *brokerConfig) jaasKey(prefix, mechanism string) string {
	if k := prefix + mechanism + ".sasl.jaas.config"; c.has(k) {
		return k
	}
	return "sasl.jaas.config"
}

// OAUTHBEARER's validator classes (sasl.server.callback.handler.class,
// prefixed with the listener and the mechanism: Kafka reads it nowhere
// else). The default is the unsecured one.
var (
	signedValidators = []string{
		"org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler", // its pre-3.4 name
	}
	unsecuredValidator = "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler"
)

// oauthKeys are the sasl.oauthbearer.* keys of the signed-token
// validator (KIP-768), read per listener as Kafka reads them:
// listener.name.<l>.oauthbearer.<key>, then listener.name.<l>.<key>,
// then <key>.
var oauthKeys = []string{
	"sasl.oauthbearer.jwks.endpoint.url",
	"sasl.oauthbearer.jwks.endpoint.refresh.ms",
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
	"sasl.oauthbearer.expected.audience",
	"sasl.oauthbearer.expected.issuer",
	"sasl.oauthbearer.scope.claim.name",
	"sasl.oauthbearer.sub.claim.name",
	"sasl.oauthbearer.clock.skew.seconds",
}

// oauthValue is a sasl.oauthbearer.* key's value for the listener whose
// prefix is listener.name.<l>., and the key it came from.
func (c *brokerConfig) oauthValue(prefix, name string) (string, string) {
	for _, k := range []string{prefix + "oauthbearer." + name, prefix + name} {
		if c.has(k) {
			return c.str(k), k
		}
	}
	return c.str(name), name
}

// oauthListener configures a listener's OAUTHBEARER validator. With
// listener.name.<l>.oauthbearer.sasl.server.callback.handler.class naming
// Kafka's OAuthBearerValidatorCallbackHandler, tokens must be JWTs signed
// with a key of sasl.oauthbearer.jwks.endpoint.url's set (opened by the
// node); otherwise they are unsecured JWS, checked with the options of
// the listener's OAuthBearerLoginModule JAAS entry, when there is one:
// unsecuredValidatorPrincipalClaimName, unsecuredValidatorScopeClaimName,
// unsecuredValidatorRequiredScope (space-separated) and
// unsecuredValidatorAllowableClockSkewMs.
func (c *brokerConfig) oauthListener(l *node.Listener, prefix string) error {
	var jaas map[string]string
	key := c.jaasKey(prefix, "oauthbearer")
	if c.has(key) {
		mods, err := sasl.ParseJAAS(c.str(key))
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		for _, m := range mods {
			if m.Class == "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule" {
				jaas = m.Options
			}
		}
	}
	handlerKey := prefix + "oauthbearer.sasl.server.callback.handler.class"
	switch h := c.str(handlerKey); {
	case slices.Contains(signedValidators, h):
		return c.signedOAuth(l, prefix, jaas)
	case h != "" && h != unsecuredValidator:
		return fmt.Errorf("%s=%s: kzero serves %s and %s only", handlerKey, h, signedValidators[0], unsecuredValidator)
	}
	o := jaas
	l.OAuth.PrincipalClaim, l.OAuth.ScopeClaim = o["unsecuredValidatorPrincipalClaimName"], o["unsecuredValidatorScopeClaimName"]
	l.OAuth.RequiredScope = strings.Fields(o["unsecuredValidatorRequiredScope"])
	if v := o["unsecuredValidatorAllowableClockSkewMs"]; v != "" {
		ms, err := strconv.ParseInt(v, 10, 32)
		if err != nil || ms < 0 {
			return fmt.Errorf("%s: unsecuredValidatorAllowableClockSkewMs=%q is not a non-negative int", key, v)
		}
		l.OAuth.ClockSkew = time.Duration(ms) * time.Millisecond
	}
	return nil
}

// signedOAuth reads the signed-token validator's keys. An https
// endpoint's certificate is verified against the JAAS options'
// ssl.truststore.location or ssl.truststore.certificates (PEM), as
// Kafka's JaasOptionsUtils builds its socket factory from them, else the
// system's CAs.
func (c *brokerConfig) signedOAuth(l *node.Listener, prefix string, jaas map[string]string) error {
	v := func(name string) (string, string) { return c.oauthValue(prefix, name) }
	url, urlKey := v("sasl.oauthbearer.jwks.endpoint.url")
	if url == "" {
		return fmt.Errorf("listener %s validates signed OAUTHBEARER tokens but sets no sasl.oauthbearer.jwks.endpoint.url", l.Name)
	}
	scheme, _, _ := strings.Cut(strings.ToLower(url), "://")
	if scheme != "file" && scheme != "http" && scheme != "https" {
		return fmt.Errorf("%s=%s: only the http, https and file protocols are supported", urlKey, url)
	}
	num := func(name string, min int64) (int64, error) {
		s, k := v(name)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < min {
			return 0, fmt.Errorf("%s=%q: not a number of at least %d", k, s, min)
		}
		return n, nil
	}
	refresh, err := num("sasl.oauthbearer.jwks.endpoint.refresh.ms", 1)
	if err != nil {
		return err
	}
	backoff, err := num("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", 0)
	if err != nil {
		return err
	}
	backoffMax, err := num("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", 0)
	if err != nil {
		return err
	}
	if backoffMax < backoff {
		return fmt.Errorf("listener %s: sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms (%d) is less than sasl.oauthbearer.jwks.endpoint.retry.backoff.ms (%d)", l.Name, backoffMax, backoff)
	}
	skew, err := num("sasl.oauthbearer.clock.skew.seconds", 0)
	if err != nil {
		return err
	}
	jc := &sasl.JWKSConfig{URL: url, Refresh: msDuration(refresh), RetryBackoff: msDuration(backoff), RetryBackoffMax: msDuration(backoffMax)}
	if scheme == "https" && (jaas["ssl.truststore.location"] != "" || jaas["ssl.truststore.certificates"] != "") {
		tc, err := server.TLSSettings{TruststoreLocation: jaas["ssl.truststore.location"], TruststoreCertificates: jaas["ssl.truststore.certificates"]}.ClientConfig()
		if err != nil {
			return fmt.Errorf("listener %s: the OAUTHBEARER JAAS options' truststore: %w", l.Name, err)
		}
		jc.RootCAs = tc.RootCAs
	}
	aud, _ := v("sasl.oauthbearer.expected.audience")
	iss, _ := v("sasl.oauthbearer.expected.issuer")
	sub, _ := v("sasl.oauthbearer.sub.claim.name")
	scope, _ := v("sasl.oauthbearer.scope.claim.name")
	l.JWKS = jc
	l.OAuth = sasl.OAuthConfig{PrincipalClaim: sub, ScopeClaim: scope, ClockSkew: time.Duration(skew) * time.Second, Audience: splitList(aud), Issuer: iss}
	return nil
}
