package config

import "crypto/sha256"

// deriveKey turns an operator-supplied secret of any length into an
// AES-256 key. The input is already a secret, so a plain hash with a
// domain label is enough; no password stretching is needed.
func deriveKey(secret string) []byte {
	sum := sha256.Sum256([]byte("contactbook settings encryption\x00" + secret))
	return sum[:]
}
