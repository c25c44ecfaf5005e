package campaigns

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// KeyBox seals the books' mailer API keys at rest with the 32-byte
// settings key (SETTINGS_ENCRYPTION_KEY).
type KeyBox struct {
	key []byte
}

// seal encrypts a provider key with AES-256-GCM; the book id is the
// additional data, so a sealed key copied to another book does not open.
func (k KeyBox) seal(bookID uuid.UUID, plain string) ([]byte, error) {
	aead, err := k.aead()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, []byte(plain), bookID[:]), nil
}

// open decrypts what seal sealed for the same book.
func (k KeyBox) open(bookID uuid.UUID, sealed []byte) (string, error) {
	aead, err := k.aead()
	if err != nil {
		return "", err
	}
	if len(sealed) < aead.NonceSize() {
		return "", errors.New("sealed key too short")
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], bookID[:])
	return string(plain), err
}

func (k KeyBox) aead() (cipher.AEAD, error) {
	if len(k.key) != 32 {
		return nil, fmt.Errorf("settings key must be 32 bytes, got %d", len(k.key))
	}
	block, err := aes.NewCipher(k.key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
