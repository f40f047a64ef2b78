package keyring_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/keyring"
)

func key(b byte) string {
	return base64.StdEncoding.EncodeToString([]byte(strings.Repeat(string(rune('a'+b%26)), 32)))
}

func ring(t *testing.T, current string, ids ...string) *keyring.Ring {
	t.Helper()
	f := keyring.File{Current: current, Keys: map[string]string{}}
	for i, id := range ids {
		f.Keys[id] = key(byte(i))
	}
	r, err := keyring.New(f)
	require.NoError(t, err)
	return r
}

func TestSealOpenRoundTrip(t *testing.T) {
	r := ring(t, "k1", "k1")
	id, sealed, err := r.Seal([]byte("My name is Alice"), []byte("ctx"))
	require.NoError(t, err)
	assert.Equal(t, "k1", id)
	assert.NotContains(t, string(sealed), "Alice")
	plain, err := r.Open(id, sealed, []byte("ctx"))
	require.NoError(t, err)
	assert.Equal(t, "My name is Alice", string(plain))
	_, again, _ := r.Seal([]byte("My name is Alice"), []byte("ctx"))
	assert.NotEqual(t, sealed, again, "a fresh nonce each time")
}

func TestRotationOldKeysStillOpen(t *testing.T) {
	old := ring(t, "k1", "k1")
	_, sealed, err := old.Seal([]byte("before rotation"), nil)
	require.NoError(t, err)
	rotated := ring(t, "k2", "k1", "k2")
	id, _, err := rotated.Seal([]byte("after"), nil)
	require.NoError(t, err)
	assert.Equal(t, "k2", id, "the new current key seals")
	plain, err := rotated.Open("k1", sealed, nil)
	require.NoError(t, err)
	assert.Equal(t, "before rotation", string(plain))
}

func TestOpenRefusesUnknownKeyTamperAndWrongContext(t *testing.T) {
	r := ring(t, "k1", "k1", "k2")
	_, sealed, err := r.Seal([]byte("secret text"), []byte("a"))
	require.NoError(t, err)

	_, err = r.Open("k9", sealed, []byte("a"))
	var unknown *keyring.UnknownKeyError
	require.ErrorAs(t, err, &unknown)
	assert.Equal(t, "k9", unknown.KeyID)
	assert.Contains(t, err.Error(), `"k9"`)

	tampered := append([]byte{}, sealed...)
	tampered[len(tampered)-1] ^= 1
	_, err = r.Open("k1", tampered, []byte("a"))
	assert.ErrorIs(t, err, keyring.ErrNotAuthentic)
	_, err = r.Open("k2", sealed, []byte("a"))
	assert.ErrorIs(t, err, keyring.ErrNotAuthentic, "another key of the ring")
	_, err = r.Open("k1", sealed, []byte("b"))
	assert.ErrorIs(t, err, keyring.ErrNotAuthentic, "another context")
	_, err = r.Open("k1", sealed[:5], []byte("a"))
	assert.ErrorIs(t, err, keyring.ErrNotAuthentic)
}

func TestParseRefusesBadFilesNamingTheField(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{`not json`, "not a key ring file"},
		{`{"current":"k1","keys":{}}`, "keys: none"},
		{`{"keys":{"k1":"` + key(0) + `"}}`, "current: missing"},
		{`{"current":"k2","keys":{"k1":"` + key(0) + `"}}`, `"k2" is not among the keys (k1)`},
		{`{"current":"k1","keys":{"k1":"c2hvcnQ="}}`, "keys.k1: 5 bytes, want 32"},
		{`{"current":"k1","keys":{"k1":"!!"}}`, "keys.k1: not standard base64"},
		{`{"current":"a b","keys":{"a b":"` + key(0) + `"}}`, `id "a b"`},
		{`{"current":"k1","keys":{"k1":"` + key(0) + `"},"extra":1}`, "unknown field"},
		// JSON keeps the last of two equal names: the ring would hold another key than
		// the one its reader sees first.
		{`{"current":"k1","keys":{"k1":"` + key(0) + `","k1":"` + key(1) + `"}}`, `keys: "k1" given twice`},
		{`{"current":"k1","current":"k2","keys":{"k1":"` + key(0) + `","k2":"` + key(1) + `"}}`, `"current" given twice`},
		{`{"current":"k1","keys":{"k1":"` + key(0) + `"}} trailing`, "text after the JSON object"},
		{`{"current":"k1","keys":{"k1":"` + key(0) + `"}}{}`, "text after the JSON object"},
		// A key where an id belongs (the two swapped) is not printed.
		{`{"current":"k1","keys":{"` + key(0) + `":"k1"}}`, "keys: id (44 characters, not shown: it reads as a key)"},
		{`{"current":"` + key(0) + `","keys":{"k1":"` + key(0) + `"}}`, "current: (44 characters, not shown: it reads as a key) is not among the keys (k1)"},
	} {
		_, err := keyring.Parse([]byte(c.file))
		require.Error(t, err, c.file)
		assert.Contains(t, err.Error(), c.want, c.file)
		assert.NotContains(t, err.Error(), key(0), "no key material in errors")
	}
}

func TestFromEnvAndFlag(t *testing.T) {
	t.Setenv(keyring.Env, "")
	r, err := keyring.FromEnv("")
	require.NoError(t, err)
	assert.Nil(t, r, "no ring: encryption off")

	dir := t.TempDir()
	envPath, flagPath := filepath.Join(dir, "env.json"), filepath.Join(dir, "flag.json")
	require.NoError(t, os.WriteFile(envPath, []byte(`{"current":"e1","keys":{"e1":"`+key(0)+`"}}`), 0o600))
	require.NoError(t, os.WriteFile(flagPath, []byte(`{"current":"f1","keys":{"f1":"`+key(1)+`"}}`), 0o600))
	t.Setenv(keyring.Env, envPath)
	r, err = keyring.FromEnv("")
	require.NoError(t, err)
	assert.Equal(t, "e1", r.Current())
	r, err = keyring.FromEnv(flagPath)
	require.NoError(t, err)
	assert.Equal(t, "f1", r.Current(), "the flag overrides the environment")
	_, err = keyring.FromEnv(filepath.Join(dir, "missing.json"))
	assert.Error(t, err)
}

func TestGenerate(t *testing.T) {
	f, err := keyring.Generate("k1")
	require.NoError(t, err)
	r, err := keyring.New(f)
	require.NoError(t, err)
	assert.Equal(t, []string{"k1"}, r.IDs())
	id, sealed, err := r.Seal([]byte("x"), nil)
	require.NoError(t, err)
	plain, err := r.Open(id, sealed, nil)
	require.NoError(t, err)
	assert.Equal(t, "x", string(plain))
}

func TestSealDeterministic(t *testing.T) {
	r := ring(t, "k1", "k1")
	id, a := r.SealDeterministic([]byte("body"), []byte("c1\x00m1"))
	_, b := r.SealDeterministic([]byte("body"), []byte("c1\x00m1"))
	assert.Equal(t, "k1", id)
	assert.Equal(t, a, b, "same input, same bytes")
	_, c := r.SealDeterministic([]byte("body"), []byte("c1\x00m2"))
	assert.NotEqual(t, a, c, "another context, another nonce")
	plain, err := r.Open(id, a, []byte("c1\x00m1"))
	require.NoError(t, err)
	assert.Equal(t, "body", string(plain))
	_, err = r.Open(id, a, []byte("c1\x00m2"))
	assert.ErrorIs(t, err, keyring.ErrNotAuthentic, "a body moved to another message does not open")
}
