package sasl

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
)

// JWK is one public verification key of a JSON Web Key Set (RFC 7517):
// an RSA key (kty "RSA": n, e) or an elliptic-curve key (kty "EC": crv
// P-256, P-384 or P-521; x, y).
type JWK struct {
	ID     string // kid
	Use    string // use: "" or "sig" to verify signatures
	Alg    string // alg: "" or the one algorithm the key is for
	Public crypto.PublicKey
}

// fits reports whether the key may verify a signature of algorithm alg.
func (k *JWK) fits(alg string, a algorithm) bool {
	if k.Use != "" && k.Use != "sig" || k.Alg != "" && k.Alg != alg {
		return false
	}
	switch pub := k.Public.(type) {
	case *rsa.PublicKey:
		return a.kty == "RSA"
	case *ecdsa.PublicKey:
		return a.kty == "EC" && pub.Curve.Params().Name == a.curve
	}
	return false
}

// ParseJWKS reads a JSON Web Key Set ({"keys":[...]}). Keys kzero cannot
// verify with (symmetric keys, other key types and curves, RSA keys
// below 2048 bits) and malformed keys are skipped and counted in skipped,
// as jose4j ignores a JWK it cannot process rather than the whole set; a
// document that is not a key set is an error.
func ParseJWKS(b []byte) (keys []JWK, skipped int, err error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, 0, fmt.Errorf("JWKS: %w", err)
	}
	if set.Keys == nil {
		return nil, 0, errors.New(`JWKS: no "keys" array`)
	}
	for _, raw := range set.Keys {
		if k, ok, err := parseJWK(raw); ok && err == nil {
			keys = append(keys, k)
		} else {
			skipped++
		}
	}
	return keys, skipped, nil
}

// maxRSABits bounds the work one signature check costs.
const maxRSABits = 16384

// parseJWK reads one key; ok is false for a key kzero does not use.
func parseJWK(raw json.RawMessage) (k JWK, ok bool, err error) {
	var j struct {
		Kty, Kid, Use, Alg string
		N, E               string
		Crv, X, Y          string
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		return k, false, err
	}
	k.ID, k.Use, k.Alg = j.Kid, j.Use, j.Alg
	switch j.Kty {
	case "RSA":
		n, err := b64Int(j.N, "n")
		if err != nil {
			return k, false, err
		}
		e, err := b64Int(j.E, "e")
		if err != nil {
			return k, false, err
		}
		if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
			return k, false, errors.New("RSA exponent e is out of range")
		}
		if n.BitLen() > maxRSABits {
			return k, false, fmt.Errorf("RSA modulus of %d bits is larger than %d", n.BitLen(), maxRSABits)
		}
		if n.BitLen() < minRSABits {
			return k, false, nil
		}
		k.Public = &rsa.PublicKey{N: n, E: int(e.Int64())}
		return k, true, nil
	case "EC":
		var curve elliptic.Curve
		switch j.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return k, false, nil
		}
		size := (curve.Params().BitSize + 7) / 8
		x, err1 := base64.RawURLEncoding.DecodeString(j.X)
		y, err2 := base64.RawURLEncoding.DecodeString(j.Y)
		if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
			return k, false, fmt.Errorf("EC key on %s: x and y must be %d Base64URL-encoded bytes", j.Crv, size)
		}
		point := append(append([]byte{4}, x...), y...)
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, point)
		if err != nil {
			return k, false, fmt.Errorf("EC key on %s: %w", j.Crv, err)
		}
		k.Public = pub
		return k, true, nil
	}
	return k, false, nil
}

// b64Int decodes a Base64urlUInt (RFC 7518 2): a big-endian unsigned
// integer, Base64URL-encoded without padding.
func b64Int(s, name string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("RSA key: %s is not a Base64urlUInt", name)
	}
	return new(big.Int).SetBytes(b), nil
}
