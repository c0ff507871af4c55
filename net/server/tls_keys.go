package server

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// This file derives a TLS session's record keys, which crypto/tls keeps to
// itself, so the kernel can take the connection over (tls_kernel.go).
//
// The secrets come from crypto/tls's KeyLogWriter (the NSS key log
// format): for TLS 1.3 the client and server application traffic secrets,
// for TLS 1.2 the master secret. From them the keys and IVs follow by the
// RFCs' key schedules: RFC 8446 section 7.3 (HKDF-Expand-Label "key" and
// "iv"), RFC 5246 section 6.3 (the PRF's "key expansion" over the server
// and client randoms; the server random is read from the ServerHello the
// server wrote, tls_wire.go). Sequence numbers: TLS 1.3 starts the
// application keys at 0, and with session tickets off (tls.go) the server
// sends no record under them during the handshake; TLS 1.2's Finished
// messages were record 0 under the new keys, so data starts at 1.

// keyLog collects the secrets crypto/tls logs during one handshake. Only
// the handshake's goroutine writes it.
type keyLog struct {
	clientRandom []byte
	master       []byte // TLS 1.2
	clientSecret []byte // TLS 1.3 CLIENT_TRAFFIC_SECRET_0
	serverSecret []byte // TLS 1.3 SERVER_TRAFFIC_SECRET_0
}

// Write takes one key log line: LABEL <client random> <secret>, in hex.
func (k *keyLog) Write(p []byte) (int, error) {
	f := strings.Fields(string(p))
	if len(f) != 3 {
		return len(p), nil
	}
	secret, err := hex.DecodeString(f[2])
	if err != nil {
		return len(p), nil
	}
	switch f[0] {
	case "CLIENT_RANDOM":
		k.clientRandom, _ = hex.DecodeString(f[1])
		k.master = secret
	case "CLIENT_TRAFFIC_SECRET_0":
		k.clientSecret = secret
	case "SERVER_TRAFFIC_SECRET_0":
		k.serverSecret = secret
	}
	return len(p), nil
}

// Kernel cipher ids and sizes (linux/tls.h).
const (
	kernelAESGCM128 = 51
	kernelAESGCM256 = 52
	kernelChaCha20  = 54
)

// aead is what the key schedule needs to know of a cipher suite the kernel
// can take.
type aead struct {
	kernel  uint16 // the kernel's cipher id
	keyLen  int
	ivLen   int // TLS 1.2's fixed IV: 4 for AES-GCM, 12 for ChaCha20-Poly1305
	newHash func() hash.Hash
}

// offloadable are the cipher suites kTLS serves: AES-GCM and
// ChaCha20-Poly1305, in TLS 1.3 and in TLS 1.2's AEAD suites.
var offloadable = map[uint16]aead{
	tls.TLS_AES_128_GCM_SHA256:                        {kernelAESGCM128, 16, 4, sha256.New},
	tls.TLS_AES_256_GCM_SHA384:                        {kernelAESGCM256, 32, 4, sha512.New384},
	tls.TLS_CHACHA20_POLY1305_SHA256:                  {kernelChaCha20, 32, 12, sha256.New},
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256:         {kernelAESGCM128, 16, 4, sha256.New},
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:       {kernelAESGCM128, 16, 4, sha256.New},
	tls.TLS_RSA_WITH_AES_128_GCM_SHA256:               {kernelAESGCM128, 16, 4, sha256.New},
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384:         {kernelAESGCM256, 32, 4, sha512.New384},
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:       {kernelAESGCM256, 32, 4, sha512.New384},
	tls.TLS_RSA_WITH_AES_256_GCM_SHA384:               {kernelAESGCM256, 32, 4, sha512.New384},
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256:   {kernelChaCha20, 32, 12, sha256.New},
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: {kernelChaCha20, 32, 12, sha256.New},
}

// trafficKeys are one direction's record protection.
type trafficKeys struct {
	key []byte
	iv  []byte // TLS 1.3 and ChaCha20: the 12-byte IV; TLS 1.2 AES-GCM: the 4-byte salt
	seq uint64 // the sequence number of the next record
}

// sessionKeys are a connection's record keys after its handshake: tx for
// the records the server writes, rx for those it reads.
type sessionKeys struct {
	version uint16
	suite   aead
	tx, rx  trafficKeys
}

// deriveKeys computes the record keys of a finished handshake.
func deriveKeys(st tls.ConnectionState, kl *keyLog, serverRandom []byte) (sessionKeys, error) {
	a, ok := offloadable[st.CipherSuite]
	if !ok {
		return sessionKeys{}, fmt.Errorf("cipher suite %s is not one kTLS serves", tls.CipherSuiteName(st.CipherSuite))
	}
	k := sessionKeys{version: st.Version, suite: a}
	switch st.Version {
	case tls.VersionTLS13:
		if kl.clientSecret == nil || kl.serverSecret == nil {
			return sessionKeys{}, fmt.Errorf("no TLS 1.3 traffic secrets logged")
		}
		var err error
		if k.rx, err = tls13Keys(a, kl.clientSecret); err != nil {
			return sessionKeys{}, err
		}
		if k.tx, err = tls13Keys(a, kl.serverSecret); err != nil {
			return sessionKeys{}, err
		}
	case tls.VersionTLS12:
		if kl.master == nil || len(kl.clientRandom) != 32 || len(serverRandom) != 32 {
			return sessionKeys{}, fmt.Errorf("no TLS 1.2 master secret or randoms")
		}
		seed := append(append([]byte(nil), serverRandom...), kl.clientRandom...)
		kb := prf12(a.newHash, kl.master, "key expansion", seed, 2*a.keyLen+2*a.ivLen)
		// client_write_key, server_write_key, client_write_IV, server_write_IV
		// (AEAD suites have no MAC keys).
		ck, kb := kb[:a.keyLen], kb[a.keyLen:]
		sk, kb := kb[:a.keyLen], kb[a.keyLen:]
		civ, siv := kb[:a.ivLen], kb[a.ivLen:]
		k.rx = trafficKeys{key: ck, iv: civ, seq: 1}
		k.tx = trafficKeys{key: sk, iv: siv, seq: 1}
	default:
		return sessionKeys{}, fmt.Errorf("TLS version %x is not one kTLS serves", st.Version)
	}
	return k, nil
}

// tls13Keys derives a TLS 1.3 direction's key and IV from its traffic
// secret (RFC 8446 section 7.3).
func tls13Keys(a aead, secret []byte) (trafficKeys, error) {
	key, err := expandLabel(a.newHash, secret, "key", a.keyLen)
	if err != nil {
		return trafficKeys{}, err
	}
	iv, err := expandLabel(a.newHash, secret, "iv", 12)
	if err != nil {
		return trafficKeys{}, err
	}
	return trafficKeys{key: key, iv: iv}, nil
}

// expandLabel is HKDF-Expand-Label (RFC 8446 section 7.1) with an empty
// context.
func expandLabel(h func() hash.Hash, secret []byte, label string, n int) ([]byte, error) {
	full := "tls13 " + label
	info := make([]byte, 0, 4+len(full))
	info = append(info, byte(n>>8), byte(n), byte(len(full)))
	info = append(info, full...)
	info = append(info, 0)
	return hkdf.Expand(h, secret, string(info), n)
}

// prf12 is TLS 1.2's PRF (RFC 5246 section 5): P_hash(secret, label+seed).
func prf12(h func() hash.Hash, secret []byte, label string, seed []byte, n int) []byte {
	ls := append([]byte(label), seed...)
	mac := hmac.New(h, secret)
	mac.Write(ls)
	a := mac.Sum(nil) // A(1)
	out := make([]byte, 0, n+mac.Size())
	for len(out) < n {
		mac.Reset()
		mac.Write(a)
		mac.Write(ls)
		out = mac.Sum(out)
		mac.Reset()
		mac.Write(a)
		a = mac.Sum(a[:0])
	}
	return out[:n]
}
