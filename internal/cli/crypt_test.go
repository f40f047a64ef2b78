package cli_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/internal/syncbuf"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/codec"
	"github.com/agentchat/agentchat/internal/cli"
	"github.com/agentchat/agentchat/keyring"
)

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut strings.Builder
	code := cli.Execute(t.Context(), args, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

// `starter keys` writes a ring; --add rotates to a new current key keeping the old.
func TestKeysWritesAndRotatesARing(t *testing.T) {
	out, errOut, code := run(t, "keys", "--id", "k1")
	require.Equal(t, 0, code, errOut)
	r, err := keyring.Parse([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, "k1", r.Current())

	path := filepath.Join(t.TempDir(), "keys.json")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o600))
	out, errOut, code = run(t, "keys", "--id", "k2", "--add", path)
	require.Equal(t, 0, code, errOut)
	r2, err := keyring.Parse([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, "k2", r2.Current())
	assert.Equal(t, []string{"k1", "k2"}, r2.IDs())
	_, sealed, err := r.Seal([]byte("old"), nil)
	require.NoError(t, err)
	plain, err := r2.Open("k1", sealed, nil)
	require.NoError(t, err, "the old key is kept")
	assert.Equal(t, "old", string(plain))

	_, errOut, code = run(t, "keys", "--id", "k1", "--add", path)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `already holds a key "k1"`)
}

// `starter codec-server` serves the codec protocol behind the token and stops when
// interrupted; without a token or a ring it refuses to start.
func TestCodecServerCommand(t *testing.T) {
	out, _, code := run(t, "keys", "--id", "k1")
	require.Equal(t, 0, code)
	path := filepath.Join(t.TempDir(), "keys.json")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o600))

	t.Setenv(codec.TokenEnv, "")
	_, errOut, code := run(t, "--keys", path, "codec-server", "--listen", "127.0.0.1:0")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, codec.TokenEnv)
	t.Setenv(keyring.Env, "")
	t.Setenv(codec.TokenEnv, "tok")
	_, errOut, code = run(t, "codec-server", "--listen", "127.0.0.1:0")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no key ring")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	ctx, cancel := context.WithCancel(t.Context())
	var sout, serr syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Execute(ctx, []string{"--keys", path, "codec-server", "--listen", addr}, cli.Streams{In: strings.NewReader(""), Out: &sout, Err: &serr})
	}()
	require.Eventually(t, func() bool { return strings.Contains(sout.String(), "codec server at") }, 10*time.Second, 10*time.Millisecond, serr.String())
	for auth, want := range map[string]int{"": http.StatusUnauthorized, "Bearer tok": http.StatusOK} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/default/decode", strings.NewReader(`{"payloads":[]}`))
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, "authorization %q", auth)
	}
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, serr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("the codec server did not stop when interrupted")
	}
}

// The help of keys and codec-server tells a newcomer what to set and what follows:
// where the ring goes, that it is secret, rotation's next step; the token, how to
// choose one, the UI's settings, the limits and statuses.
func TestKeysAndCodecServerHelpSayWhatANewcomerNeeds(t *testing.T) {
	out, _, code := run(t, "keys", "--help")
	require.Equal(t, 0, code)
	for _, want := range []string{"AES-256-GCM", keyring.Env, "chmod 600", "reencrypt", "AGENTCHAT_SIGNING_KEY"} {
		assert.Contains(t, out, want)
	}
	out, _, code = run(t, "codec-server", "--help")
	require.Equal(t, 0, code)
	for _, want := range []string{keyring.Env, codec.TokenEnv, "openssl rand", "TEMPORAL_CODEC_ENDPOINT",
		"TEMPORAL_CODEC_PASS_ACCESS_TOKEN", "/{namespace}/", "4 MiB", "413", "TLS"} {
		assert.Contains(t, out, want)
	}
}

// `keys --out` writes the ring itself, mode 0600, replacing the file only once the new
// ring is whole, so `--add keys.json --out keys.json` rotates in place (a shell's
// `> keys.json` empties the file before keys reads it, and the old keys are gone). An
// empty --add file is refused with that likely cause.
func TestKeysOutRotatesInPlaceAndExplainsAnEmptyRing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	out, errOut, code := run(t, "keys", "--id", "k1", "--out", path)
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, `"keys"`, "the ring goes to the file, not to standard output")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	r1, err := keyring.Load(path)
	require.NoError(t, err)

	_, errOut, code = run(t, "keys", "--id", "k2", "--add", path, "--out", path)
	require.Equal(t, 0, code, errOut)
	r2, err := keyring.Load(path)
	require.NoError(t, err)
	assert.Equal(t, "k2", r2.Current())
	assert.Equal(t, []string{"k1", "k2"}, r2.IDs())
	_, sealed, err := r1.Seal([]byte("old"), nil)
	require.NoError(t, err)
	_, err = r2.Open("k1", sealed, nil)
	require.NoError(t, err, "k1 is the same key after the rotation in place")

	empty := filepath.Join(t.TempDir(), "empty.json")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	_, errOut, code = run(t, "keys", "--id", "k2", "--add", empty)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "is empty")
	assert.Contains(t, errOut, "--out")
}

// `keys --out FILE` never replaces a ring it did not read: the keys in FILE may still be
// the only copy that decrypts chats. Writing over an existing file other than the --add
// file is refused, naming --add (rotate) and --force (replace); nothing is written.
func TestKeysOutRefusesToReplaceARingItDidNotRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.json")
	_, errOut, code := run(t, "keys", "--id", "k1", "--out", path)
	require.Equal(t, 0, code, errOut)
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	_, errOut, code = run(t, "keys", "--id", "k1", "--out", path)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "already exists")
	assert.Contains(t, errOut, "--add "+path)
	assert.Contains(t, errOut, "--force")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the refused run leaves the ring as it was")

	// The same file named another way is still the --add file: a rotation in place.
	_, errOut, code = run(t, "keys", "--id", "k2", "--add", path, "--out", filepath.Join(dir, ".", "keys.json"))
	require.Equal(t, 0, code, errOut)
	// Another file as --add does not license replacing --out.
	other := filepath.Join(dir, "other.json")
	_, errOut, code = run(t, "keys", "--id", "k9", "--out", other)
	require.Equal(t, 0, code, errOut)
	_, errOut, code = run(t, "keys", "--id", "k3", "--add", other, "--out", path)
	assert.Equal(t, 1, code, "replacing a ring with another one's keys loses its own")
	assert.Contains(t, errOut, "already exists")

	_, errOut, code = run(t, "keys", "--id", "k5", "--out", path, "--force")
	require.Equal(t, 0, code, errOut)
	r, err := keyring.Load(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"k5"}, r.IDs(), "--force replaces the ring whole")
}
