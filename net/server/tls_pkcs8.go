package server

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

// Encrypted PKCS#8 keys (RFC 5208 EncryptedPrivateKeyInfo) with PBES2
// (RFC 8018): what `openssl pkcs8 -topk8 -v2 aes-256-cbc` writes and
// Kafka's PEM keystores read with ssl.key.password. Go's standard library
// reads unencrypted PKCS#8 only; PBES2 is PBKDF2 then a CBC cipher, both
// in it.
//
//	EncryptedPrivateKeyInfo ::= SEQUENCE {
//	    encryptionAlgorithm  AlgorithmIdentifier,  -- PBES2 and its params
//	    encryptedData        OCTET STRING }
//	PBES2-params ::= SEQUENCE {
//	    keyDerivationFunc  AlgorithmIdentifier,    -- PBKDF2 and its params
//	    encryptionScheme   AlgorithmIdentifier }   -- e.g. aes256-CBC, IV
//	PBKDF2-params ::= SEQUENCE {
//	    salt            OCTET STRING,
//	    iterationCount  INTEGER,
//	    keyLength       INTEGER OPTIONAL,
//	    prf             AlgorithmIdentifier DEFAULT hmacWithSHA1 }

var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

// maxPBKDF2Iterations bounds the work a key file can ask for.
const maxPBKDF2Iterations = 10_000_000

type algorithmIdentifier struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

type encryptedPrivateKeyInfo struct {
	Algorithm     algorithmIdentifier
	EncryptedData []byte
}

type pbes2Params struct {
	KeyDerivationFunc algorithmIdentifier
	EncryptionScheme  algorithmIdentifier
}

type pbkdf2Params struct {
	Salt           []byte
	IterationCount int
	KeyLength      int                 `asn1:"optional"`
	PRF            algorithmIdentifier `asn1:"optional"`
}

// errWrongPassword is a key that does not decrypt to PKCS#8 with the
// password given.
var errWrongPassword = errors.New("ssl.key.password does not decrypt the key")

// decryptPKCS8 decrypts an ENCRYPTED PRIVATE KEY block's bytes with
// password and returns the PKCS#8 key.
func decryptPKCS8(der []byte, password string) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) > 0 {
		return nil, fmt.Errorf("not an EncryptedPrivateKeyInfo: %v", err)
	}
	if !info.Algorithm.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("key encryption %v is not PBES2 (openssl pkcs8 -topk8 -v2 aes-256-cbc writes it)", info.Algorithm.Algorithm)
	}
	var params pbes2Params
	if rest, err := asn1.Unmarshal(info.Algorithm.Parameters.FullBytes, &params); err != nil || len(rest) > 0 {
		return nil, fmt.Errorf("PBES2 parameters: %v", err)
	}
	if !params.KeyDerivationFunc.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("key derivation %v is not PBKDF2", params.KeyDerivationFunc.Algorithm)
	}
	var kdf pbkdf2Params
	if rest, err := asn1.Unmarshal(params.KeyDerivationFunc.Parameters.FullBytes, &kdf); err != nil || len(rest) > 0 {
		return nil, fmt.Errorf("PBKDF2 parameters: %v", err)
	}
	if kdf.IterationCount <= 0 || kdf.IterationCount > maxPBKDF2Iterations {
		return nil, fmt.Errorf("PBKDF2 iteration count %d out of range", kdf.IterationCount)
	}
	var prf func() hash.Hash
	switch a := kdf.PRF.Algorithm; {
	case len(a) == 0 || a.Equal(oidHMACSHA1):
		prf = sha1.New
	case a.Equal(oidHMACSHA256):
		prf = sha256.New
	case a.Equal(oidHMACSHA384):
		prf = sha512.New384
	case a.Equal(oidHMACSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("PBKDF2 PRF %v is not HMAC-SHA1/256/384/512", a)
	}
	var keyLen int
	var newCipher func([]byte) (cipher.Block, error)
	switch a := params.EncryptionScheme.Algorithm; {
	case a.Equal(oidAES128CBC):
		keyLen, newCipher = 16, aes.NewCipher
	case a.Equal(oidAES192CBC):
		keyLen, newCipher = 24, aes.NewCipher
	case a.Equal(oidAES256CBC):
		keyLen, newCipher = 32, aes.NewCipher
	case a.Equal(oidDESEDE3CBC):
		keyLen, newCipher = 24, des.NewTripleDESCipher
	default:
		return nil, fmt.Errorf("key cipher %v is not AES-CBC or DES-EDE3-CBC", a)
	}
	if kdf.KeyLength != 0 && kdf.KeyLength != keyLen {
		return nil, fmt.Errorf("PBKDF2 key length %d, the cipher needs %d", kdf.KeyLength, keyLen)
	}
	var iv []byte
	if rest, err := asn1.Unmarshal(params.EncryptionScheme.Parameters.FullBytes, &iv); err != nil || len(rest) > 0 {
		return nil, fmt.Errorf("cipher IV: %v", err)
	}
	key, err := pbkdf2.Key(prf, password, kdf.Salt, kdf.IterationCount, keyLen)
	if err != nil {
		return nil, err
	}
	block, err := newCipher(key)
	if err != nil {
		return nil, err
	}
	bs := block.BlockSize()
	if len(iv) != bs || len(info.EncryptedData) == 0 || len(info.EncryptedData)%bs != 0 {
		return nil, fmt.Errorf("encrypted key of %d bytes, IV of %d: not CBC blocks of %d", len(info.EncryptedData), len(iv), bs)
	}
	plain := make([]byte, len(info.EncryptedData))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, info.EncryptedData)
	// PKCS#7 padding: a wrong password shows here or in the parse.
	pad := int(plain[len(plain)-1])
	if pad == 0 || pad > bs {
		return nil, errWrongPassword
	}
	for _, b := range plain[len(plain)-pad:] {
		if int(b) != pad {
			return nil, errWrongPassword
		}
	}
	plain = plain[:len(plain)-pad]
	if _, err := x509.ParsePKCS8PrivateKey(plain); err != nil {
		return nil, errWrongPassword
	}
	return plain, nil
}
