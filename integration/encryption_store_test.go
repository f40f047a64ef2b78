package integration_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/internal/cli"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/wire"
)

// Encryption at rest of the message store's bodies and of documents: the rows and the
// files hold no chat text, everything still reads, and a tampered envelope or one
// under an unknown key is refused with nothing imported.

// writeRing writes f to a file and returns its path.
func writeRing(t *testing.T, f keyring.File) string {
	t.Helper()
	b, err := json.Marshal(f)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "keys.json")
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return p
}

// encryptedLongChat plays 20 turns naming a distinctive word on an encrypted harness
// whose chat spills its older bodies to the SQLite store.
func encryptedLongChat(t *testing.T, ring *keyring.Ring) (*testenv.Harness, string) {
	h := testenv.New(t, testenv.Options{Keys: ring})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"},
		Store: msgstore.NameSQLite, HistoryBudget: wire.HistoryBudget{MaxEvents: 60}})
	require.NoError(t, err)
	for i := range 20 {
		send(t, h, id, "t"+string(rune('a'+i)), "Zorblax turn "+string(rune('a'+i)))
	}
	return h, id
}

func TestEncryptedStoreRowsAndDocuments(t *testing.T) {
	f := ringFile(t, "k1")
	ring, err := keyring.New(f)
	require.NoError(t, err)
	h, id := encryptedLongChat(t, ring)
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.GreaterOrEqual(t, st.Runs, 1, "the chat continued as new and spilled bodies")

	// The store's rows, read without the ring: no chat text.
	rs, ok := h.MessageStore.(msgstore.RowStore)
	require.True(t, ok, "the SQLite store keeps rows")
	rows, err := rs.GetRows(ctxFor(t), id, []string{"ta", "ta/1"})
	require.NoError(t, err)
	require.Len(t, rows, 2, "the older bodies are in the store")
	for _, b := range rows {
		assert.NotContains(t, string(b), "Zorblax")
		assert.True(t, strings.HasPrefix(string(b), msgstore.BinaryRowPrefix+"\x02k1"), "sealed, in the binary form")
	}

	// The client with the store and the ring reads them whole.
	withStore := agentchat.NewClient(h.Temporal, agentchat.ClientOptions{TaskQueue: h.TaskQueue, Keys: ring,
		MessageStores: map[string]msgstore.Store{h.MessageStore.Name(): h.MessageStore}})
	doc, digest, err := withStore.Export(ctxFor(t), id)
	require.NoError(t, err)
	assert.Contains(t, string(doc), "Zorblax turn a", "the plain export has the earliest turn")

	// The envelope: no text; imports into a new chat that remembers.
	sealed, err := withStore.SealDocument(doc, digest)
	require.NoError(t, err)
	assert.NotContains(t, string(sealed), "Zorblax")
	restored := testenv.ChatID(t) + "-restored"
	_, err = h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: restored, Document: sealed})
	require.NoError(t, err)
	hist, err := withStore.History(ctxFor(t), restored, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, 40, hist.Total)

	// Tampered, and under a key this ring lacks: refused, nothing created.
	var e envelope.Envelope
	require.NoError(t, json.Unmarshal(sealed, &e))
	ct, _ := base64.StdEncoding.DecodeString(e.Ciphertext)
	ct[len(ct)/2] ^= 0x40
	tampered := e
	tampered.Ciphertext = base64.StdEncoding.EncodeToString(ct)
	wrongKey := e
	wrongKey.KeyID = "k7"
	for name, env := range map[string]envelope.Envelope{"tampered": tampered, "wrong key id": wrongKey} {
		b, err := json.Marshal(env)
		require.NoError(t, err)
		target := testenv.ChatID(t) + "-" + strings.ReplaceAll(name, " ", "-")
		_, err = h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: target, Document: b})
		require.Error(t, err, name)
		if name == "tampered" {
			assert.ErrorIs(t, err, keyring.ErrNotAuthentic)
		} else {
			assert.Contains(t, err.Error(), `unknown encryption key id "k7"`)
		}
		_, derr := h.Temporal.DescribeWorkflowExecution(ctxFor(t), target, "")
		var nf *serviceerror.NotFound
		assert.ErrorAs(t, derr, &nf, "%s: nothing was created", name)
	}

	// The worker's own sinks write envelopes: a file on the worker.
	path := filepath.Join(t.TempDir(), "by-worker.json")
	res, err := h.Client.ExportTo(ctxFor(t), id, agentchat.ExportInput{Sink: wire.SinkFile, Path: path})
	require.NoError(t, err)
	onDisk, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, envelope.IsEnvelope(onDisk))
	assert.NotContains(t, string(onDisk), "Zorblax")
	opened, _, err := withStore.OpenDocument(onDisk)
	require.NoError(t, err)
	assert.Contains(t, string(opened), res.Digest)
	assert.Contains(t, string(opened), "Zorblax turn a")
}

func TestCLIExportWritesTheEnvelopeAndPlainOnRequest(t *testing.T) {
	f := ringFile(t, "k1")
	ring, err := keyring.New(f)
	require.NoError(t, err)
	keys := writeRing(t, f)
	h := testenv.New(t, testenv.Options{Keys: ring})
	id := testenv.ChatID(t)
	_, err = h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	send(t, h, id, "m1", "My name is Ophelia Wrenfield")

	run := func(args ...string) (string, string, int) {
		var out, errOut strings.Builder
		code := cli.Execute(ctxFor(t), append([]string{"--address", testenv.Address(t), "--task-queue", h.TaskQueue, "--keys", keys}, args...),
			cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
		return out.String(), errOut.String(), code
	}
	dir := t.TempDir()
	sealedPath, plainPath := filepath.Join(dir, "sealed.json"), filepath.Join(dir, "plain.json")
	out, errOut, code := run("export", "--chat", id, "--out", sealedPath)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `encrypted with key "k1"`)
	b, err := os.ReadFile(sealedPath)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "Wrenfield")
	_, errOut, code = run("export", "--chat", id, "--out", plainPath, "--plain")
	require.Equal(t, 0, code, errOut)
	b, err = os.ReadFile(plainPath)
	require.NoError(t, err)
	assert.Contains(t, string(b), "Ophelia Wrenfield")

	for i, in := range []string{sealedPath, plainPath} {
		out, errOut, code = run("import", "--chat", id+"-imported-"+string(rune('a'+i)), "--in", in)
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "restored")
	}
	out, errOut, code = run("participants", "--in", sealedPath)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "helper")
}

// A client that has the message store but not the key ring cannot read sealed bodies:
// its History fails naming the encryption and the key id, where it used to answer
// with the stored messages' stubs (no contents) and no error. Its Export still works,
// through the worker, which has the ring. With the ring, History reads everything.
func TestHistoryOfSealedBodiesWithoutTheKeyRingIsAnError(t *testing.T) {
	ring := testRing(t, "k7")
	h, id := encryptedLongChat(t, ring)
	stores := map[string]msgstore.Store{h.MessageStore.Name(): h.MessageStore}

	keyless := agentchat.NewClient(h.Temporal, agentchat.ClientOptions{TaskQueue: h.TaskQueue, MessageStores: stores})
	_, err := keyless.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.Error(t, err, "stubs were returned as if they were the messages")
	assert.ErrorIs(t, err, msgstore.ErrEncrypted)
	assert.Contains(t, err.Error(), `"k7"`, "the error names the key id")

	doc, _, err := keyless.Export(ctxFor(t), id)
	require.NoError(t, err, "the export goes through the worker")
	assert.Contains(t, string(doc), "Zorblax turn a")

	keyed := agentchat.NewClient(h.Temporal, agentchat.ClientOptions{TaskQueue: h.TaskQueue, MessageStores: stores, Keys: ring})
	hist, err := keyed.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, 40)
	for i, m := range hist.Messages {
		require.NotEmpty(t, m.Text(), "message %d has no text", i)
	}
	assert.Equal(t, "Zorblax turn a", hist.Messages[0].Text())
}
