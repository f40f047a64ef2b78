// Package keyring holds the symmetric keys that encrypt chat content at rest
// (Temporal payloads, message store bodies, exported documents), and seals and opens
// bytes with them (AES-256-GCM, from Go's crypto/aes and crypto/cipher).
//
// A ring is a JSON file, named by AGENTCHAT_KEYS or a --keys flag:
//
//	{"current": "k2", "keys": {"k1": "<base64 of 32 bytes>", "k2": "<base64 of 32 bytes>"}}
//
// The current key seals; every key of the ring opens, so a rotated-out key keeps
// old ciphertext readable until it is re-encrypted. A sealed value is the 12-byte
// random nonce followed by the GCM ciphertext and its 16-byte tag; the key id travels
// beside it (payload metadata, envelope field), never inside.
package keyring
