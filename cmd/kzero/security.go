package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"kzero/net/api"
	"kzero/net/sasl"
	"kzero/node"
)

// The per-listener keys kzero reads (Kafka's listener prefix: the listener
// name in lower case, and for a JAAS config the mechanism in lower case):
//
//	listener.name.<listener>.sasl.enabled.mechanisms
//	listener.name.<listener>.<mechanism>.sasl.jaas.config
//	listener.name.<listener>.ssl.* (ssl.go)
//	listener.name.<listener>.max.connections (connlimits.go)
var listenerSuffixes = []string{".sasl.enabled.mechanisms", ".sasl.jaas.config", ".max.connections"}

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
// listener that is not PLAINTEXT.
func (c *brokerConfig) security(client []listener) ([]node.Listener, error) {
	adv, err := c.advertisedListeners(client)
	if err != nil {
		return nil, fmt.Errorf("advertised.listeners: %w", err)
	}
	var out []node.Listener
	for _, l := range client {
		nl := node.Listener{Listener: api.Listener{Name: l.name, SecurityProtocol: protocolID(l.protocol)}, Addr: l.addr, Advertised: adv[l.name]}
		if l.protocol == "SASL_PLAINTEXT" || l.protocol == "SASL_SSL" {
			if err := c.saslListener(&nl.Listener); err != nil {
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
	if ib := c.str("inter.broker.listener.name"); ib != "" {
		i := slices.IndexFunc(out, func(l node.Listener) bool { return l.Name == ib })
		switch {
		case i < 0:
			return nil, fmt.Errorf("inter.broker.listener.name=%s is not a client listener of listeners", ib)
		case out[i].SecurityProtocol != api.ProtocolPlaintext:
			return nil, fmt.Errorf("inter.broker.listener.name=%s: kzero's inter-broker clients speak neither TLS nor SASL yet; name a PLAINTEXT listener", ib)
		}
	}
	return out, nil
}

// saslListener reads a SASL listener's mechanisms and PLAIN users.
func (c *brokerConfig) saslListener(l *api.Listener) error {
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
		if err := c.oauthListener(l, prefix); err != nil {
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

// oauthListener reads OAUTHBEARER's unsecured validator options from the
// listener's OAuthBearerLoginModule JAAS entry, when there is one:
// unsecuredValidatorPrincipalClaimName, unsecuredValidatorScopeClaimName,
// unsecuredValidatorRequiredScope (space-separated) and
// unsecuredValidatorAllowableClockSkewMs. Tokens are not checked for a
// signature: kzero serves unsecured OAUTHBEARER only (no JWKS validation).
func (c *brokerConfig) oauthListener(l *api.Listener, prefix string) error {
	key := c.jaasKey(prefix, "oauthbearer")
	if !c.has(key) {
		return nil
	}
	mods, err := sasl.ParseJAAS(c.str(key))
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	for _, m := range mods {
		if m.Class != "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule" {
			continue
		}
		o := m.Options
		l.OAuth.PrincipalClaim, l.OAuth.ScopeClaim = o["unsecuredValidatorPrincipalClaimName"], o["unsecuredValidatorScopeClaimName"]
		l.OAuth.RequiredScope = strings.Fields(o["unsecuredValidatorRequiredScope"])
		if v := o["unsecuredValidatorAllowableClockSkewMs"]; v != "" {
			ms, err := strconv.ParseInt(v, 10, 32)
			if err != nil || ms < 0 {
				return fmt.Errorf("%s: unsecuredValidatorAllowableClockSkewMs=%q is not a non-negative int", key, v)
			}
			l.OAuth.ClockSkew = time.Duration(ms) * time.Millisecond
		}
	}
	return nil
}
