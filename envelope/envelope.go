package envelope

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agentchat/agentchat/internal/b64"
)

// Version is the envelope's format version, its "envelope" field.
const Version = 1

// AlgorithmEd25519 is the only signature algorithm of version 1.
const AlgorithmEd25519 = "Ed25519"

// additionalData is authenticated with every sealed document.
var additionalData = []byte("agentchat-envelope-v1")

// signedPrefix starts the bytes a signature covers: the prefix, then the digest.
const signedPrefix = "agentchat-chat-state-digest:"

// Envelope is the JSON shape (docs/chat-state-v1.md, "Envelope").
type Envelope struct {
	Envelope int `json:"envelope"`
	// KeyID and Ciphertext (base64, standard) when encrypted.
	KeyID      string `json:"keyId,omitempty"`
	Ciphertext string `json:"ciphertext,omitempty"`
	// Document is the plain v1 document when not encrypted.
	Document  json.RawMessage `json:"document,omitempty"`
	Signature *Signature      `json:"signature,omitempty"`
}

// Signature signs a document's digest: Value is the base64 Ed25519 signature of
// "agentchat-chat-state-digest:" + Digest.
type Signature struct {
	Algorithm string `json:"algorithm"`
	KeyID     string `json:"keyId"`
	Digest    string `json:"digest"`
	Value     string `json:"value"`
}

// Errors of Open, wrapped with the details.
var (
	ErrUnsigned  = errors.New("envelope: the document is not signed, and a signature is required")
	ErrForged    = errors.New("envelope: the signature does not verify: the document was altered or signed by another key")
	ErrNoRing    = errors.New("envelope: the document is encrypted, and no key ring is configured (AGENTCHAT_KEYS)")
	ErrMalformed = errors.New("envelope: malformed")
)

// IsEnvelope reports whether b is a JSON object with an "envelope" field. It does
// not read a large document whole: b is an envelope at once when "envelope" is its
// first member (as Seal writes it), and not one when the word is nowhere in it.
func IsEnvelope(b []byte) bool {
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	if rest, ok := bytes.CutPrefix(trimmed, []byte("{")); ok &&
		bytes.HasPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte(`"envelope"`)) {
		return true
	}
	if !bytes.Contains(b, []byte(`"envelope"`)) {
		return false
	}
	var probe struct {
		Envelope *json.RawMessage `json:"envelope"`
	}
	return json.Unmarshal(b, &probe) == nil && probe.Envelope != nil
}

// Seal wraps doc (a canonical v1 document whose digest field is digest): encrypted
// when o.Ring is set, signed when o.Signer is. With neither, doc is returned as it is.
func Seal(doc []byte, digest string, o Options) ([]byte, error) {
	if o.Ring == nil && o.Signer == nil {
		return doc, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(doc)*4/3 + 256)
	buf.WriteString(`{"envelope":1`)
	if o.Ring != nil {
		id, sealed, err := o.Ring.Seal(doc, additionalData)
		if err != nil {
			return nil, err
		}
		keyID, _ := json.Marshal(id) // key ids are [A-Za-z0-9._-]
		buf.WriteString(`,"keyId":`)
		buf.Write(keyID)
		buf.WriteString(`,"ciphertext":"`)
		b64.Append(&buf, sealed)
		buf.WriteString(`"`)
	} else {
		if !json.Valid(doc) {
			return nil, fmt.Errorf("%w: the document is not JSON", ErrMalformed)
		}
		buf.WriteString(`,"document":`)
		buf.Write(doc) // its bytes as they are
	}
	if o.Signer != nil {
		sig, err := json.Marshal(o.Signer.sign(digest))
		if err != nil {
			return nil, err
		}
		buf.WriteString(`,"signature":`)
		buf.Write(sig)
	}
	buf.WriteString(`}`)
	return buf.Bytes(), nil
}

// Open returns the v1 document in b, an envelope or a plain document, and whether it
// was encrypted and signed. The signature is checked against the digest the inner
// document states, so a caller must still decode it with chatstate.Decode, which
// checks that digest against the content. Errors: ErrMalformed, ErrNoRing,
// *keyring.UnknownKeyError, keyring.ErrNotAuthentic (tampered ciphertext), ErrUnsigned
// (o.RequireSignature), ErrForged, and an unknown signing key id.
func Open(b []byte, o Options) ([]byte, Info, error) {
	if !IsEnvelope(b) {
		if o.RequireSignature {
			return nil, Info{}, ErrUnsigned
		}
		return b, Info{}, nil
	}
	e, ciphertext, err := parse(b)
	if err != nil {
		return nil, Info{}, err
	}
	if e.Envelope != Version {
		return nil, Info{}, fmt.Errorf("%w: envelope: version %d, this reader knows %d", ErrMalformed, e.Envelope, Version)
	}
	info := Info{KeyID: e.KeyID}
	doc := []byte(e.Document)
	switch {
	case len(ciphertext) > 0 && len(e.Document) > 0:
		return nil, info, fmt.Errorf("%w: both ciphertext and document", ErrMalformed)
	case len(ciphertext) > 0:
		if o.Ring == nil {
			return nil, info, fmt.Errorf("%w (key %q)", ErrNoRing, e.KeyID)
		}
		sealed, err := b64.Decode(ciphertext)
		if err != nil {
			return nil, info, fmt.Errorf("%w: ciphertext: not standard base64", ErrMalformed)
		}
		if doc, err = o.Ring.OpenInPlace(e.KeyID, sealed, additionalData); err != nil {
			return nil, info, fmt.Errorf("envelope: %w", err)
		}
	case len(doc) == 0:
		return nil, info, fmt.Errorf("%w: neither ciphertext nor document", ErrMalformed)
	}
	if e.Signature == nil {
		if o.RequireSignature {
			return nil, info, ErrUnsigned
		}
		return doc, info, nil
	}
	if err := o.verify(*e.Signature, doc); err != nil {
		return nil, info, err
	}
	info.SignedBy = e.Signature.KeyID
	return doc, info, nil
}

// parse reads an envelope strictly (no unknown fields, nothing after it) and returns it with its
// ciphertext's base64 (nil when it has none; Envelope.Ciphertext is left empty). A
// large ciphertext is cut out before the JSON decoder reads the rest, as base64 holds
// no character JSON escapes, and is returned as a part of b, not copied; one that
// holds an escape, or an envelope with a document, goes through the decoder whole.
func parse(b []byte) (Envelope, []byte, error) {
	const key = `"ciphertext":"`
	var e Envelope
	rest := b
	var ciphertext []byte
	// A document inside may hold the key itself (a channel state): no cutting then.
	if i := bytes.Index(b, []byte(key)); i >= 0 && !bytes.Contains(b, []byte(`"document"`)) {
		start := i + len(key)
		if n := bytes.IndexByte(b[start:], '"'); n >= 0 && bytes.IndexByte(b[start:start+n], '\\') < 0 {
			ciphertext = b[start : start+n]
			rest = make([]byte, 0, len(b)-n)
			rest = append(append(rest, b[:start]...), b[start+n:]...)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(rest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Envelope{}, nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Envelope{}, nil, fmt.Errorf("%w: text after the envelope's JSON object", ErrMalformed)
	}
	if ciphertext == nil && e.Ciphertext != "" {
		ciphertext = []byte(e.Ciphertext)
	}
	e.Ciphertext = ""
	return e, ciphertext, nil
}

// Info says how an opened document was wrapped.
type Info struct {
	// KeyID is the encryption key's id; "" when not encrypted.
	KeyID string
	// SignedBy is the id of the signing key that verified; "" when unsigned.
	SignedBy string
}

func (o Options) verify(s Signature, doc []byte) error {
	if s.Algorithm != AlgorithmEd25519 {
		return fmt.Errorf("%w: signature.algorithm %q, want %q", ErrMalformed, s.Algorithm, AlgorithmEd25519)
	}
	pub, ok := o.trusted(s.KeyID)
	if !ok {
		return fmt.Errorf("envelope: signed by unknown key id %q: add its public key to the verification keys (AGENTCHAT_VERIFY_KEYS)", s.KeyID)
	}
	var stated struct {
		Digest string `json:"digest"`
	}
	if err := json.Unmarshal(doc, &stated); err != nil {
		return fmt.Errorf("%w: document: %v", ErrMalformed, err)
	}
	if stated.Digest != s.Digest {
		return fmt.Errorf("%w (signed digest %q, document states %q)", ErrForged, s.Digest, stated.Digest)
	}
	sig, err := base64.StdEncoding.DecodeString(s.Value)
	if err != nil || !ed25519.Verify(pub, []byte(signedPrefix+s.Digest), sig) {
		return fmt.Errorf("%w (key %q)", ErrForged, s.KeyID)
	}
	return nil
}

func (o Options) trusted(id string) (ed25519.PublicKey, bool) {
	if o.Signer != nil && o.Signer.KeyID == id {
		return o.Signer.Key.Public().(ed25519.PublicKey), true
	}
	pub, ok := o.Verify[id]
	return pub, ok
}

// sign returns the signature of digest.
func (s *Signer) sign(digest string) *Signature {
	return &Signature{Algorithm: AlgorithmEd25519, KeyID: s.KeyID, Digest: digest,
		Value: base64.StdEncoding.EncodeToString(ed25519.Sign(s.Key, []byte(signedPrefix+digest)))}
}
