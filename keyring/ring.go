package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Env names the environment variable holding the path of the key ring file.
const Env = "AGENTCHAT_KEYS"

// KeyBytes is the length of every key: AES-256.
const KeyBytes = 32

// NonceBytes is the length of the nonce that starts every sealed value (GCM's standard).
const NonceBytes = 12

// TagBytes is the length of the authentication tag that ends every sealed value.
const TagBytes = 16

// keyIDPattern bounds key ids: they travel in payload metadata and error messages.
var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// File is the key ring file's shape.
type File struct {
	// Current is the id of the key that seals new values.
	Current string `json:"current"`
	// Keys maps key ids to the base64 (standard, padded) of 32 random bytes.
	Keys map[string]string `json:"keys"`
}

// Ring is a loaded key ring. Safe for concurrent use.
type Ring struct {
	current string
	aeads   map[string]cipher.AEAD
	// macs derive SealDeterministic's nonces: per key, a pool of HMAC-SHA256 keyed
	// with the nonce key (HMAC-SHA256 of the key and "agentchat-synthetic-nonce"), so
	// the AES key itself is used by GCM only, and sealing many small values does not
	// build an HMAC each time.
	macs map[string]*sync.Pool
}

// Parse reads a ring from its JSON file content (DecodeStrict: no name twice, no
// unknown field, nothing after it). Errors name the field: a missing or unknown current key, a key id outside [A-Za-z0-9._-]{1,64},
// a key that is not base64 of exactly 32 bytes. Error texts never hold key material.
func Parse(data []byte) (*Ring, error) {
	var f File
	if err := DecodeStrict(data, &f); err != nil {
		return nil, fmt.Errorf("keyring: not a key ring file ({\"current\": ID, \"keys\": {ID: base64}}): %w", err)
	}
	return New(f)
}

// New builds a ring from its file shape; errors as Parse.
func New(f File) (*Ring, error) {
	if len(f.Keys) == 0 {
		return nil, errors.New("keyring: keys: none given")
	}
	if f.Current == "" {
		return nil, errors.New("keyring: current: missing (the id of the key that encrypts)")
	}
	r := &Ring{current: f.Current, aeads: map[string]cipher.AEAD{}, macs: map[string]*sync.Pool{}}
	for id, enc := range f.Keys {
		if !keyIDPattern.MatchString(id) {
			return nil, fmt.Errorf("keyring: keys: id %s: want 1 to 64 of A-Z a-z 0-9 . _ -", ShowID(id))
		}
		key, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			return nil, fmt.Errorf("keyring: keys.%s: not standard base64", id)
		}
		if len(key) != KeyBytes {
			return nil, fmt.Errorf("keyring: keys.%s: %d bytes, want %d (AES-256)", id, len(key), KeyBytes)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("keyring: keys.%s: %w", id, err)
		}
		if r.aeads[id], err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("keyring: keys.%s: %w", id, err)
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte("agentchat-synthetic-nonce"))
		nonceKey := mac.Sum(nil)
		r.macs[id] = &sync.Pool{New: func() any { return hmac.New(sha256.New, nonceKey) }}
	}
	if _, ok := r.aeads[f.Current]; !ok {
		return nil, fmt.Errorf("keyring: current: %s is not among the keys (%s)", ShowID(f.Current), strings.Join(r.IDs(), ", "))
	}
	return r, nil
}

// Load reads the ring file at path.
func Load(path string) (*Ring, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	r, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return r, nil
}

// FromEnv loads the ring at path, else at $AGENTCHAT_KEYS; with neither set it
// returns nil and no error: encryption is off.
func FromEnv(path string) (*Ring, error) {
	if path == "" {
		path = os.Getenv(Env)
	}
	if path == "" {
		return nil, nil
	}
	return Load(path)
}

// Current is the id of the key that seals.
func (r *Ring) Current() string { return r.current }

// IDs lists the ring's key ids, sorted.
func (r *Ring) IDs() []string {
	ids := make([]string, 0, len(r.aeads))
	for id := range r.aeads {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Seal encrypts plain with the current key, authenticating aad too (which is not
// stored; Open needs the same aad). It returns the key id and nonce‖ciphertext‖tag.
func (r *Ring) Seal(plain, aad []byte) (keyID string, sealed []byte, err error) {
	aead := r.aeads[r.current]
	out := make([]byte, NonceBytes, NonceBytes+len(plain)+aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		return "", nil, fmt.Errorf("keyring: nonce: %w", err)
	}
	return r.current, aead.Seal(out, out[:NonceBytes], plain, aad), nil
}

// SealDeterministic is Seal with a synthetic nonce: the first 12 bytes of
// HMAC-SHA256(nonce key, len(aad)‖aad‖plain), so the same plain and aad under the same
// key give the same bytes (a store's idempotent put compares them), and equal values
// are all it tells apart. Open opens it.
func (r *Ring) SealDeterministic(plain, aad []byte) (keyID string, sealed []byte) {
	return r.AppendSealDeterministic(nil, plain, aad)
}

// AppendSealDeterministic is SealDeterministic appending nonce‖ciphertext‖tag to dst
// (which must not overlap plain), for a caller sealing many values into one buffer.
func (r *Ring) AppendSealDeterministic(dst, plain, aad []byte) (keyID string, sealed []byte) {
	aead := r.aeads[r.current]
	pool := r.macs[r.current]
	mac := pool.Get().(hash.Hash)
	mac.Reset()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(aad)))
	mac.Write(n[:])
	mac.Write(aad)
	mac.Write(plain)
	var sum [sha256.Size]byte
	nonce := mac.Sum(sum[:0])[:NonceBytes]
	pool.Put(mac)
	dst = slices.Grow(dst, NonceBytes+len(plain)+aead.Overhead())
	start := len(dst)
	dst = append(dst, nonce...)
	return r.current, aead.Seal(dst, dst[start:start+NonceBytes], plain, aad)
}

// Open decrypts what Seal returned under keyID. Errors: *UnknownKeyError for a key id
// the ring lacks; ErrNotAuthentic when the bytes were altered, cut, or sealed by
// another key or with another aad.
func (r *Ring) Open(keyID string, sealed, aad []byte) ([]byte, error) {
	return r.open(keyID, sealed, aad, false)
}

// OpenInPlace is Open decrypting into sealed's own storage (so sealed is overwritten,
// also when it fails): for large values whose sealed bytes are not needed after.
func (r *Ring) OpenInPlace(keyID string, sealed, aad []byte) ([]byte, error) {
	return r.open(keyID, sealed, aad, true)
}

func (r *Ring) open(keyID string, sealed, aad []byte, inPlace bool) ([]byte, error) {
	aead, ok := r.aeads[keyID]
	if !ok {
		return nil, &UnknownKeyError{KeyID: keyID, Known: r.IDs()}
	}
	if len(sealed) < NonceBytes+aead.Overhead() {
		return nil, fmt.Errorf("%w (key %q: %d bytes, shorter than nonce and tag)", ErrNotAuthentic, keyID, len(sealed))
	}
	var dst []byte
	if inPlace {
		dst = sealed[NonceBytes:NonceBytes]
	}
	plain, err := aead.Open(dst, sealed[:NonceBytes], sealed[NonceBytes:], aad)
	if err != nil {
		return nil, fmt.Errorf("%w (key %q)", ErrNotAuthentic, keyID)
	}
	return plain, nil
}

// Generate returns a ring file with a fresh random key for each id, the last current
// (one id: a ring of one key).
func Generate(ids ...string) (File, error) {
	f := File{Keys: map[string]string{}}
	for _, id := range ids {
		key := make([]byte, KeyBytes)
		if _, err := rand.Read(key); err != nil {
			return File{}, err
		}
		f.Keys[id], f.Current = base64.StdEncoding.EncodeToString(key), id
	}
	return f, nil
}
