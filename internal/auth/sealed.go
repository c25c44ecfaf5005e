package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// SecretBox seals secrets the service must read back (a user's TOTP
// secret, a book's mailer API key) with the 32-byte settings key
// (SETTINGS_ENCRYPTION_KEY), in AES-256-GCM: the random nonce, then the
// ciphertext and its tag. The caller's additional data binds a sealed value to its
// row, so one copied to another row does not open.
type SecretBox struct {
	key []byte
}

// NewSecretBox returns a box over a 32-byte key.
func NewSecretBox(key []byte) SecretBox { return SecretBox{key: key} }

// Seal encrypts plain, bound to ad.
func (b SecretBox) Seal(plain, ad []byte) ([]byte, error) {
	aead, err := b.aead()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, plain, ad), nil
}

// Open decrypts what Seal sealed with the same ad.
func (b SecretBox) Open(sealed, ad []byte) ([]byte, error) {
	aead, err := b.aead()
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("sealed value too short")
	}
	return aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], ad)
}

func (b SecretBox) aead() (cipher.AEAD, error) {
	if len(b.key) != 32 {
		return nil, fmt.Errorf("secret box key must be 32 bytes, got %d", len(b.key))
	}
	block, err := aes.NewCipher(b.key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
