package sasl

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strings"
)

// ScramMechanism is one SCRAM hash: SCRAM-SHA-256 or SCRAM-SHA-512.
type ScramMechanism struct {
	Name string
	// Type is Kafka's id of the mechanism in DescribeUserScramCredentials
	// and AlterUserScramCredentials: 1 SHA-256, 2 SHA-512.
	Type int8
	hash func() hash.Hash
}

// The SCRAM mechanisms Kafka knows.
var (
	SHA256 = &ScramMechanism{Name: ScramSHA256, Type: 1, hash: sha256.New}
	SHA512 = &ScramMechanism{Name: ScramSHA512, Type: 2, hash: sha512.New}
)

// Iteration bounds of a stored credential, Kafka's: below MinIterations a
// credential is refused at login and at AlterUserScramCredentials, above
// MaxIterations at AlterUserScramCredentials.
const (
	MinIterations = 4096
	MaxIterations = 16384
)

// ScramByName returns the mechanism named name, nil if none.
func ScramByName(name string) *ScramMechanism {
	switch name {
	case ScramSHA256:
		return SHA256
	case ScramSHA512:
		return SHA512
	}
	return nil
}

// ScramByType returns the mechanism with Kafka's id t, nil if none.
func ScramByType(t int8) *ScramMechanism {
	switch t {
	case SHA256.Type:
		return SHA256
	case SHA512.Type:
		return SHA512
	}
	return nil
}

// Credential is what a server stores of a SCRAM password (RFC 5802 section
// 5): enough to check a client's proof and to prove itself, not enough to
// log in.
type Credential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// Credentials looks up a user's credential for a mechanism.
type Credentials func(user string, m *ScramMechanism) (Credential, bool)

// TokenCredentials looks up the SCRAM credential of a delegation token
// (KIP-48: the client authenticates with the token id as its user name and
// the token's HMAC, base64, as its password, and the tokenauth=true
// extension) and the principal that owns it; ok is false for an unknown or
// expired token.
type TokenCredentials func(tokenID string, m *ScramMechanism) (cred Credential, owner string, ok bool)

// SaltedPassword is Hi(password, salt, iterations): PBKDF2 with HMAC of
// the mechanism's hash.
func (m *ScramMechanism) SaltedPassword(password string, salt []byte, iterations int) ([]byte, error) {
	return pbkdf2.Key(m.hash, password, salt, iterations, m.hash().Size())
}

// CredentialFromSalted derives the stored credential from a salted
// password (what AlterUserScramCredentials carries).
func (m *ScramMechanism) CredentialFromSalted(salted, salt []byte, iterations int32) Credential {
	clientKey := m.hmac(salted, []byte("Client Key"))
	h := m.hash()
	h.Write(clientKey)
	return Credential{
		Salt:       salt,
		StoredKey:  h.Sum(nil),
		ServerKey:  m.hmac(salted, []byte("Server Key")),
		Iterations: iterations,
	}
}

// NewCredential salts password with a random salt.
func (m *ScramMechanism) NewCredential(password string, iterations int) (Credential, error) {
	salt := make([]byte, 32)
	rand.Read(salt)
	salted, err := m.SaltedPassword(password, salt, iterations)
	if err != nil {
		return Credential{}, err
	}
	return m.CredentialFromSalted(salted, salt, int32(iterations)), nil
}

func (m *ScramMechanism) hmac(key, msg []byte) []byte {
	mac := hmac.New(m.hash, key)
	mac.Write(msg)
	return mac.Sum(nil)
}

// scramExchange is the server side of SCRAM (RFC 5802 section 3): client
// first, server first, client final, server final.
type scramExchange struct {
	m      *ScramMechanism
	lookup Credentials
	tokens TokenCredentials
	owner  string // the token's owner principal, for a delegation token

	state       int // 0 want client first, 1 want client final, 2 done, 3 failed
	user        string
	cred        Credential
	clientFirst string // client-first-message-bare
	serverFirst string
	nonce       string // client nonce + server nonce
}

// NewScram starts a SCRAM exchange with credentials from lookup and, for
// the tokenauth extension, delegation tokens from tokens (nil: none).
func NewScram(m *ScramMechanism, lookup Credentials, tokens TokenCredentials) Exchange {
	return &scramExchange{m: m, lookup: lookup, tokens: tokens}
}

// errBadCredentials is every SCRAM failure that Kafka reports with its
// generic message (unknown user, wrong proof, malformed messages).
var errBadCredentials = errors.New("sasl: invalid SCRAM credentials")

func (x *scramExchange) Step(token []byte) ([]byte, bool, error) {
	switch x.state {
	case 0:
		resp, err := x.first(token)
		if err != nil {
			x.state = 3
			return nil, false, err
		}
		x.state = 1
		return resp, false, nil
	case 1:
		resp, err := x.final(token)
		if err != nil {
			x.state = 3
			return nil, false, err
		}
		x.state = 2
		return resp, true, nil
	}
	return nil, false, errState
}

func (x *scramExchange) first(token []byte) ([]byte, error) {
	cf, err := ParseClientFirst(token)
	if err != nil {
		return nil, err
	}
	cred, ok := Credential{}, false
	if cf.Extensions["tokenauth"] == "true" {
		if x.tokens != nil {
			cred, x.owner, ok = x.tokens(cf.User, x.m)
		}
		if !ok {
			return nil, fmt.Errorf("Token Authentication failed: Invalid tokenId : %s: %w", cf.User, errBadCredentials)
		}
	} else {
		if x.lookup != nil {
			cred, ok = x.lookup(cf.User, x.m)
		}
		if !ok {
			return nil, fmt.Errorf("Authentication failed: Invalid user credentials: %w", errBadCredentials)
		}
	}
	if cf.AuthzID != "" && cf.AuthzID != cf.User {
		return nil, &AuthError{Msg: "Authentication failed: Client requested an authorization id that is different from username"}
	}
	if cred.Iterations < MinIterations {
		return nil, fmt.Errorf("Iterations %d is less than the minimum %d for %s: %w", cred.Iterations, MinIterations, x.m.Name, errBadCredentials)
	}
	var nb [24]byte
	rand.Read(nb[:])
	x.user, x.cred, x.clientFirst = cf.User, cred, cf.Bare
	x.nonce = cf.Nonce + base64.RawURLEncoding.EncodeToString(nb[:])
	x.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", x.nonce, base64.StdEncoding.EncodeToString(cred.Salt), cred.Iterations)
	return []byte(x.serverFirst), nil
}

func (x *scramExchange) final(token []byte) ([]byte, error) {
	cf, err := ParseClientFinal(token)
	if err != nil {
		return nil, err
	}
	// Kafka accepts a nonce that ends with the server's (endsWith, not
	// equals): librdkafka sends its own nonce again before the server's
	// whole one. The proof below covers what the client sent either way.
	if !strings.HasSuffix(cf.Nonce, x.nonce) {
		return nil, fmt.Errorf("Invalid client nonce in the final client message.: %w", errBadCredentials)
	}
	auth := []byte(x.clientFirst + "," + x.serverFirst + "," + cf.WithoutProof)
	sig := x.m.hmac(x.cred.StoredKey, auth)
	if len(cf.Proof) != len(sig) {
		return nil, fmt.Errorf("Invalid client credentials: %w", errBadCredentials)
	}
	clientKey := make([]byte, len(sig))
	subtle.XORBytes(clientKey, cf.Proof, sig)
	h := x.m.hash()
	h.Write(clientKey)
	if subtle.ConstantTimeCompare(h.Sum(nil), x.cred.StoredKey) != 1 {
		return nil, fmt.Errorf("Invalid client credentials: %w", errBadCredentials)
	}
	serverSig := x.m.hmac(x.cred.ServerKey, auth)
	x.cred = Credential{}
	return []byte("v=" + base64.StdEncoding.EncodeToString(serverSig)), nil
}

// TokenOwner is the principal owning the delegation token the client
// authenticated with, "" when it authenticated as a user.
func (x *scramExchange) TokenOwner() string {
	if x.state != 2 {
		return ""
	}
	return x.owner
}

func (x *scramExchange) User() string {
	if x.state != 2 {
		return ""
	}
	return x.user
}
