package envelope_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/keyring"
)

const doc = `{"chatId":"c1","digest":"sha256:00ff","history":[{"contents":[{"text":"My name is Alice","type":"text"}]}],"schemaVersion":1}`

func ring(t *testing.T, ids ...string) *keyring.Ring {
	t.Helper()
	f, err := keyring.Generate(ids...)
	require.NoError(t, err)
	r, err := keyring.New(f)
	require.NoError(t, err)
	return r
}

func signer(t *testing.T, id string) *envelope.Signer {
	t.Helper()
	f, _, err := envelope.GenerateSigner(id)
	require.NoError(t, err)
	s, err := envelope.NewSigner(f)
	require.NoError(t, err)
	return s
}

func TestSealOpenEncryptedAndSigned(t *testing.T) {
	o := envelope.Options{Ring: ring(t, "k1"), Signer: signer(t, "s1"), RequireSignature: true}
	b, err := envelope.Seal([]byte(doc), "sha256:00ff", o)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "Alice")
	assert.True(t, envelope.IsEnvelope(b))
	got, info, err := envelope.Open(b, o)
	require.NoError(t, err)
	assert.Equal(t, doc, string(got))
	assert.Equal(t, "k1", info.KeyID)
	assert.Equal(t, "s1", info.SignedBy)
}

func TestPlainDocumentsAndNoOptions(t *testing.T) {
	b, err := envelope.Seal([]byte(doc), "sha256:00ff", envelope.Options{})
	require.NoError(t, err)
	assert.Equal(t, doc, string(b), "nothing configured: the v1 document as it is")
	got, _, err := envelope.Open([]byte(doc), envelope.Options{Ring: ring(t, "k1")})
	require.NoError(t, err)
	assert.Equal(t, doc, string(got), "a plain document reads with encryption on")
	_, _, err = envelope.Open([]byte(doc), envelope.Options{RequireSignature: true})
	assert.ErrorIs(t, err, envelope.ErrUnsigned)
}

func TestSignedOnlyKeepsTheDocumentReadable(t *testing.T) {
	s := signer(t, "s1")
	b, err := envelope.Seal([]byte(`{"digest":"sha256:00ff","x":"<&>"}`), "sha256:00ff", envelope.Options{Signer: s})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"document":{"digest":"sha256:00ff","x":"<&>"}`, "the bytes unchanged")
	pub := s.Key.Public().(ed25519.PublicKey)
	got, info, err := envelope.Open(b, envelope.Options{Verify: map[string]ed25519.PublicKey{"s1": pub}, RequireSignature: true})
	require.NoError(t, err)
	assert.Equal(t, `{"digest":"sha256:00ff","x":"<&>"}`, string(got))
	assert.Equal(t, "s1", info.SignedBy)
}

func TestOpenRefusals(t *testing.T) {
	r := ring(t, "k1")
	s := signer(t, "s1")
	sealed, err := envelope.Seal([]byte(doc), "sha256:00ff", envelope.Options{Ring: r, Signer: s})
	require.NoError(t, err)
	var e envelope.Envelope
	require.NoError(t, json.Unmarshal(sealed, &e))
	edit := func(f func(*envelope.Envelope)) []byte {
		c := e
		sig := *e.Signature
		c.Signature = &sig
		f(&c)
		b, err := json.Marshal(c)
		require.NoError(t, err)
		return b
	}
	full := envelope.Options{Ring: r, Signer: s}

	ct, _ := base64.StdEncoding.DecodeString(e.Ciphertext)
	ct[len(ct)/2] ^= 1
	_, _, err = envelope.Open(edit(func(c *envelope.Envelope) { c.Ciphertext = base64.StdEncoding.EncodeToString(ct) }), full)
	assert.ErrorIs(t, err, keyring.ErrNotAuthentic, "tampered ciphertext")

	_, _, err = envelope.Open(edit(func(c *envelope.Envelope) { c.KeyID = "k9" }), full)
	var unknown *keyring.UnknownKeyError
	require.ErrorAs(t, err, &unknown, "wrong key id")
	assert.Contains(t, err.Error(), `"k9"`)

	_, _, err = envelope.Open(sealed, envelope.Options{Ring: r})
	assert.ErrorContains(t, err, `unknown key id "s1"`, "a signature by a key not trusted")

	other := signer(t, "s1")
	_, _, err = envelope.Open(sealed, envelope.Options{Ring: r, Signer: other})
	assert.ErrorIs(t, err, envelope.ErrForged, "same key id, other key")

	_, _, err = envelope.Open(edit(func(c *envelope.Envelope) { c.Signature.Digest = "sha256:1111" }), full)
	assert.ErrorIs(t, err, envelope.ErrForged, "a signature of another digest")

	_, _, err = envelope.Open(edit(func(c *envelope.Envelope) { c.Signature = nil }), envelope.Options{Ring: r, RequireSignature: true})
	assert.ErrorIs(t, err, envelope.ErrUnsigned)

	_, _, err = envelope.Open(sealed, envelope.Options{})
	assert.ErrorIs(t, err, envelope.ErrNoRing)

	for _, bad := range []string{`{"envelope":2,"document":{}}`, `{"envelope":1}`, `{"envelope":1,"ciphertext":"!!","keyId":"k1"}`, `{"envelope":1,"extra":1}`} {
		_, _, err = envelope.Open([]byte(bad), full)
		assert.ErrorIs(t, err, envelope.ErrMalformed, bad)
	}

	// Text after the envelope (a second object, say) is refused here, not passed on to
	// fail later as a workflow input that does not encode.
	for _, tail := range []string{` {"junk":1}`, `x`, `}`} {
		_, _, err = envelope.Open(append(append([]byte(nil), sealed...), tail...), full)
		assert.ErrorIs(t, err, envelope.ErrMalformed, tail)
		assert.ErrorContains(t, err, "text after the envelope", tail)
	}
	_, _, err = envelope.Open(append(append([]byte(nil), sealed...), " \n"...), full)
	assert.NoError(t, err, "white space after it is JSON")

	// A forged plain document: content changed under a valid signature is caught by the
	// digest check of chatstate.Decode; a changed digest here.
	plain, err := envelope.Seal([]byte(doc), "sha256:00ff", envelope.Options{Signer: s})
	require.NoError(t, err)
	forged := strings.Replace(string(plain), "sha256:00ff\",\"history", "sha256:0000\",\"history", 1)
	_, _, err = envelope.Open([]byte(forged), envelope.Options{Signer: s})
	assert.ErrorIs(t, err, envelope.ErrForged)
}

func TestIsEnvelopeInAnyMemberOrder(t *testing.T) {
	assert.True(t, envelope.IsEnvelope([]byte(` { "envelope": 1, "document": {}}`)))
	assert.True(t, envelope.IsEnvelope([]byte(`{"ciphertext":"AA==","envelope":1,"keyId":"k1"}`)), "as a writer that sorts keys writes it")
	assert.False(t, envelope.IsEnvelope([]byte(doc)))
	assert.False(t, envelope.IsEnvelope([]byte(`{"history":[{"contents":[{"text":"\"envelope\"","type":"text"}]}]}`)), "the word in a message")
	assert.False(t, envelope.IsEnvelope([]byte(`not json "envelope"`)))
}

func TestOpenSignedDocumentWhoseContentNamesCiphertext(t *testing.T) {
	s := signer(t, "s1")
	inner := `{"channels":[{"channelState":{"ciphertext":"abc"}}],"digest":"sha256:00ff"}`
	b, err := envelope.Seal([]byte(inner), "sha256:00ff", envelope.Options{Signer: s})
	require.NoError(t, err)
	got, _, err := envelope.Open(b, envelope.Options{Signer: s})
	require.NoError(t, err)
	assert.Equal(t, inner, string(got))
}

// The signing and verification key files are read strictly, and every error names the
// variable and the file and holds no key: a missing keyId, a bad key, an unknown
// field, an id given twice, text after the object, a key where the id belongs.
func TestFromEnvRefusesBadKeyFilesNamingTheFile(t *testing.T) {
	f, pub, err := envelope.GenerateSigner("s1")
	require.NoError(t, err)
	seed := f.PrivateKey
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	for _, c := range []struct{ env, file, want string }{
		{envelope.SigningKeyEnv, `{"privateKey":"` + seed + `"}`, "keyId: missing"},
		{envelope.SigningKeyEnv, `{"keyId":"s1","privateKey":"AAAA"}`, "privateKey: want base64"},
		{envelope.SigningKeyEnv, `{"keyId":"s1","private_key":"` + seed + `"}`, `unknown field "private_key"`},
		{envelope.SigningKeyEnv, `{"keyId":"s1","privateKey":"` + seed + `","keyId":"s2"}`, `"keyId" given twice`},
		{envelope.SigningKeyEnv, `{"keyId":"s1","privateKey":"` + seed + `"} x`, "after"},
		{envelope.SigningKeyEnv, `{"keyId":"` + seed + `","privateKey":"` + seed + `"}`, "keyId (44 characters, not shown: it reads as a key)"},
		{envelope.VerifyKeysEnv, `{"s1":"AAAA"}`, `key "s1": want base64`},
		{envelope.VerifyKeysEnv, `{"s1":"AAAA","s1":"` + pub + `"}`, `"s1" given twice`},
		{envelope.VerifyKeysEnv, `{"s1":"` + pub + `"}]`, "after"},
	} {
		path := write("key.json", c.file)
		t.Setenv(envelope.SigningKeyEnv, "")
		t.Setenv(envelope.VerifyKeysEnv, "")
		t.Setenv(c.env, path)
		_, err := envelope.FromEnv(nil)
		require.Error(t, err, c.file)
		assert.Contains(t, err.Error(), c.want, c.file)
		assert.Contains(t, err.Error(), c.env, c.file)
		assert.Contains(t, err.Error(), path, c.file)
		assert.NotContains(t, err.Error(), seed, "no key material in errors")
	}
}
