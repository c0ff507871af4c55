package server

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// encryptPKCS8 writes a PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC)
// EncryptedPrivateKeyInfo, as openssl pkcs8 -topk8 -v2 aes-256-cbc does.
func encryptPKCS8(t testing.TB, pkcs8 []byte, password string, iterations int) []byte {
	t.Helper()
	salt, iv := make([]byte, 16), make([]byte, 16)
	rand.Read(salt)
	rand.Read(iv)
	key, err := pbkdf2.Key(sha256.New, password, salt, iterations, 32)
	if err != nil {
		t.Fatal(err)
	}
	pad := 16 - len(pkcs8)%16
	plain := append(append([]byte(nil), pkcs8...), make([]byte, pad)...)
	for i := len(pkcs8); i < len(plain); i++ {
		plain[i] = byte(pad)
	}
	block, _ := aes.NewCipher(key)
	enc := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(enc, plain)
	raw := func(v any) asn1.RawValue {
		b, err := asn1.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return asn1.RawValue{FullBytes: b}
	}
	kdf := raw(pbkdf2Params{Salt: salt, IterationCount: iterations, PRF: algorithmIdentifier{Algorithm: oidHMACSHA256, Parameters: asn1.NullRawValue}})
	params := raw(pbes2Params{
		KeyDerivationFunc: algorithmIdentifier{Algorithm: oidPBKDF2, Parameters: kdf},
		EncryptionScheme:  algorithmIdentifier{Algorithm: oidAES256CBC, Parameters: raw(iv)},
	})
	der, err := asn1.Marshal(encryptedPrivateKeyInfo{Algorithm: algorithmIdentifier{Algorithm: oidPBES2, Parameters: params}, EncryptedData: enc})
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// TestEncryptedKey: an encrypted PKCS#8 key is read with ssl.key.password
// and served; a wrong password is refused as such.
func TestEncryptedKey(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "server"}, true, false)
	blocks, _ := parsePEM(key)
	enc := pemString("ENCRYPTED PRIVATE KEY", encryptPKCS8(t, blocks[0].der, "secret", 2048))
	s, _ := tlsServer(t, TLSSettings{KeystoreChain: cert, KeystoreKey: enc, KeyPassword: "secret"}, nil)
	c, err := dialTLS(t, s, pki.clientConfig("", ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.call(1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := NewTLS(TLSSettings{KeystoreChain: cert, KeystoreKey: enc, KeyPassword: "wrong"}); !errors.Is(err, errWrongPassword) {
		t.Fatalf("wrong password: %v", err)
	}
}

// TestEncryptedKeyOpenSSL: keys encrypted by openssl (the ciphers and PRFs
// its pkcs8 -topk8 -v2 writes) are read.
func TestEncryptedKeyOpenSSL(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "server"}, true, true)
	dir := t.TempDir()
	in := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(in, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-v2", "aes-256-cbc"},
		{"-v2", "aes-128-cbc", "-v2prf", "hmacWithSHA1"},
		{"-v2", "aes-192-cbc", "-v2prf", "hmacWithSHA512"},
		{"-v2", "des3"},
	} {
		out, err := exec.Command(openssl, append([]string{"pkcs8", "-topk8", "-in", in, "-passout", "pass:kafka-pw"}, args...)...).Output()
		if err != nil {
			t.Fatalf("openssl %v: %v", args, err)
		}
		if _, err := NewTLS(TLSSettings{KeystoreChain: cert, KeystoreKey: string(out), KeyPassword: "kafka-pw"}); err != nil {
			t.Errorf("openssl %v: %v", args, err)
		}
	}
}

// FuzzDecryptPKCS8: an encrypted key file's bytes never panic the reader.
func FuzzDecryptPKCS8(f *testing.F) {
	f.Add(encryptPKCS8(f, []byte("not a key but bytes"), "pw", 1), "pw")
	f.Add([]byte{0x30, 0x03, 0x06, 0x01, 0x00}, "")
	f.Fuzz(func(t *testing.T, der []byte, password string) {
		_, _ = decryptPKCS8(der, password)
	})
}
