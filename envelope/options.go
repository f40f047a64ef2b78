package envelope

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"

	"github.com/agentchat/agentchat/keyring"
)

// Environment variables of the signing and verification keys.
const (
	// SigningKeyEnv names a file {"keyId": "s1", "privateKey": "<base64 of the 32-byte Ed25519 seed>"}.
	SigningKeyEnv = "AGENTCHAT_SIGNING_KEY"
	// VerifyKeysEnv names a file {"s1": "<base64 of the 32-byte Ed25519 public key>", ...}.
	VerifyKeysEnv = "AGENTCHAT_VERIFY_KEYS"
	// RequireSignatureEnv, "true", refuses unsigned documents.
	RequireSignatureEnv = "AGENTCHAT_REQUIRE_SIGNATURE"
)

// Options say how documents are sealed and opened. The zero value writes and reads
// plain v1 documents.
type Options struct {
	// Ring encrypts (Seal) and decrypts (Open); nil: documents are not encrypted, and
	// an encrypted one cannot be opened.
	Ring *keyring.Ring
	// Signer signs (Seal); its public key also verifies (Open).
	Signer *Signer
	// Verify are the public keys that verify signatures, by key id.
	Verify map[string]ed25519.PublicKey
	// RequireSignature refuses unsigned documents (ErrUnsigned).
	RequireSignature bool
}

// Signer is an Ed25519 signing key and its id.
type Signer struct {
	KeyID string
	Key   ed25519.PrivateKey
}

// SigningFile is the signing key file's shape.
type SigningFile struct {
	KeyID      string `json:"keyId"`
	PrivateKey string `json:"privateKey"`
}

// GenerateSigner returns a fresh signing key file named id, and its public key (base64).
func GenerateSigner(id string) (SigningFile, string, error) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		return SigningFile{}, "", err
	}
	return SigningFile{KeyID: id, PrivateKey: base64.StdEncoding.EncodeToString(priv.Seed())},
		base64.StdEncoding.EncodeToString(pub), nil
}

// NewSigner builds a Signer from its file shape. Errors name the field, never the key.
func NewSigner(f SigningFile) (*Signer, error) {
	if f.KeyID == "" {
		return nil, fmt.Errorf("envelope: signing key: keyId: missing")
	}
	if !keyring.ValidID(f.KeyID) {
		return nil, fmt.Errorf("envelope: signing key: keyId %s: want 1 to 64 of A-Z a-z 0-9 . _ -", keyring.ShowID(f.KeyID))
	}
	seed, err := base64.StdEncoding.DecodeString(f.PrivateKey)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("envelope: signing key %q: privateKey: want base64 of a %d-byte Ed25519 seed", f.KeyID, ed25519.SeedSize)
	}
	return &Signer{KeyID: f.KeyID, Key: ed25519.NewKeyFromSeed(seed)}, nil
}

// FromEnv builds Options from ring and the environment: the signing key at
// $AGENTCHAT_SIGNING_KEY, the verification keys at $AGENTCHAT_VERIFY_KEYS and
// $AGENTCHAT_REQUIRE_SIGNATURE. Unset variables leave their part off. The files are
// read strictly (keyring.DecodeStrict); errors name the variable, the file and the
// field, never a key.
func FromEnv(ring *keyring.Ring) (Options, error) {
	o := Options{Ring: ring}
	if p := os.Getenv(SigningKeyEnv); p != "" {
		s, err := loadSigner(p)
		if err != nil {
			return Options{}, fmt.Errorf("%w (%s file %s)", err, SigningKeyEnv, p)
		}
		o.Signer = s
	}
	if p := os.Getenv(VerifyKeysEnv); p != "" {
		v, err := loadVerifyKeys(p)
		if err != nil {
			return Options{}, fmt.Errorf("%w (%s file %s)", err, VerifyKeysEnv, p)
		}
		o.Verify = v
	}
	if v := os.Getenv(RequireSignatureEnv); v != "" {
		req, err := strconv.ParseBool(v)
		if err != nil {
			return Options{}, fmt.Errorf("envelope: %s=%q: want true or false", RequireSignatureEnv, v)
		}
		o.RequireSignature = req
	}
	return o, nil
}

func loadSigner(path string) (*Signer, error) {
	var f SigningFile
	if err := readJSON(path, &f, `{"keyId": ID, "privateKey": base64}`); err != nil {
		return nil, fmt.Errorf("envelope: signing key: %w", err)
	}
	return NewSigner(f)
}

func loadVerifyKeys(path string) (map[string]ed25519.PublicKey, error) {
	var m map[string]string
	if err := readJSON(path, &m, `{ID: base64, ...}`); err != nil {
		return nil, fmt.Errorf("envelope: verification keys: %w", err)
	}
	keys := map[string]ed25519.PublicKey{}
	for id, enc := range m {
		if !keyring.ValidID(id) {
			return nil, fmt.Errorf("envelope: verification keys: id %s: want 1 to 64 of A-Z a-z 0-9 . _ -", keyring.ShowID(id))
		}
		pub, err := base64.StdEncoding.DecodeString(enc)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("envelope: verification keys: key %q: want base64 of a %d-byte Ed25519 public key", id, ed25519.PublicKeySize)
		}
		keys[id] = pub
	}
	return keys, nil
}

func readJSON(path string, v any, shape string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := keyring.DecodeStrict(b, v); err != nil {
		return fmt.Errorf("not a file of the shape %s: %w", shape, err)
	}
	return nil
}

// Wraps reports whether Seal with o wraps a document as Open found one wrapped (its
// Info): encrypted with o.Ring's current key, or not encrypted when o.Ring is nil;
// signed by o.Signer, or unsigned when o.Signer is nil. Such an envelope can be kept
// as it is rather than opened and sealed again.
func (o Options) Wraps(info Info) bool {
	wantKey, wantSigner := "", ""
	if o.Ring != nil {
		wantKey = o.Ring.Current()
	}
	if o.Signer != nil {
		wantSigner = o.Signer.KeyID
	}
	return info.KeyID == wantKey && info.SignedBy == wantSigner
}
