// Package envelope wraps a chat-state document (docs/chat-state-v1.md) for rest:
// encrypted with a keyring.Ring (AES-256-GCM), signed with an Ed25519 key over the
// document's digest, or both. Its shape is in docs/chat-state-v1.md, "Envelope":
//
//	{"envelope": 1, "keyId": "k2", "ciphertext": "<base64>",
//	 "signature": {"algorithm": "Ed25519", "keyId": "s1", "digest": "sha256:…", "value": "<base64>"}}
//
// ciphertext is nonce‖ciphertext‖tag of the canonical v1 document's bytes, sealed with
// the additional data "agentchat-envelope-v1"; an unencrypted signed envelope holds the
// document as "document" instead. A reader that is given a v1 document (no
// "envelope" field) reads it as it is, unless a signature is required.
package envelope
