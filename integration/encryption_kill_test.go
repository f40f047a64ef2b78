package integration_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/codec"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// The encrypted data paths with a worker process killed part-way (SIGKILL, as a crash
// or an OOM kill): a 10,000-message import and export, and the hand-over a Reencrypt
// signal asks for. The transfer activities heartbeat every third of 20 s, so a killed
// attempt is retried on the other worker about 20 s after the kill.

// encryptedWorkers are worker processes of one task queue with encryption on (--keys)
// and one SQLite message store they share, as workers of one deployment share theirs.
type encryptedWorkers struct {
	opts testenv.ProcessOptions
	// store is the shared store, raw (its rows as written); client reads through it.
	store  *sqlite.Store
	client *agentchat.Client
}

// newEncryptedWorkers writes the ring (and the signer, when not nil) where the worker
// processes read them, and returns the processes' options and a client with the ring's
// codec that reads the shared store. An empty config is a helper answered by the
// built-in offline model (--offline). No process is started.
func newEncryptedWorkers(t *testing.T, f keyring.File, signer *envelope.SigningFile, config string) *encryptedWorkers {
	t.Helper()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "messages.db")
	opts := testenv.ProcessOptions{TaskQueue: testenv.TaskQueue(t), Config: config,
		Args: []string{"--keys", writeRing(t, f), "--message-store", "sqlite://" + dbPath}}
	if config == "" {
		opts.Config = "agents:\n  - {id: helper, name: Helper, model: offline}\n"
		opts.Args = append(opts.Args, "--offline")
	}
	ring, err := keyring.New(f)
	require.NoError(t, err)
	docs := envelope.Options{Ring: ring}
	if signer != nil {
		b, err := json.Marshal(signer)
		require.NoError(t, err)
		p := filepath.Join(dir, "signing.json")
		require.NoError(t, os.WriteFile(p, b, 0o600))
		opts.Env = append(opts.Env, envelope.SigningKeyEnv+"="+p)
		docs.Signer, err = envelope.NewSigner(*signer)
		require.NoError(t, err)
	}
	store, err := sqlite.Open(dbPath)
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	co := client.Options{HostPort: testenv.Address(t), Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))}
	codec.Apply(&co, ring)
	tc, err := client.Dial(co)
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	c := agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: opts.TaskQueue, Keys: ring, Documents: docs,
		MessageStores: map[string]msgstore.Store{store.Name(): store}})
	return &encryptedWorkers{opts: opts, store: store, client: c}
}

// start starts one more worker process.
func (w *encryptedWorkers) start(t *testing.T) *testenv.WorkerProcess {
	t.Helper()
	return testenv.StartWorkerProcess(t, w.opts)
}

// withoutStore is a client like w.client that lacks the store: its exports go through
// the chat's worker (the ExportChat activity).
func (w *encryptedWorkers) withoutStore(t *testing.T) *agentchat.Client {
	t.Helper()
	return agentchat.NewClient(w.client.Temporal(), agentchat.ClientOptions{TaskQueue: w.opts.TaskQueue,
		Keys: w.client.Keys(), Documents: w.client.Documents()})
}

// killMidActivity waits until the chat runs activity typ, kills w there and checks that
// the attempt was cut off (the activity is still pending after the kill).
func killMidActivity(t *testing.T, c *agentchat.Client, chatID, typ string, w *testenv.WorkerProcess) {
	t.Helper()
	waitRunning(t, c, chatID, typ)
	w.Kill()
	d, err := c.Temporal().DescribeWorkflowExecution(ctxFor(t), chatID, "")
	require.NoError(t, err)
	pending := false
	for _, a := range d.GetPendingActivities() {
		pending = pending || a.GetActivityType().GetName() == typ
	}
	require.True(t, pending, "the kill came while %s ran, not after it", typ)
}

// awaitDone waits (at most 2 minutes) for a background call and returns its error.
func awaitDone[T any](t *testing.T, done <-chan T) T {
	t.Helper()
	select {
	case v := <-done:
		return v
	case <-time.After(2 * time.Minute):
		require.FailNow(t, "the call did not finish")
		var zero T
		return zero
	}
}

// assertSealedRows checks that the store holds exactly the bodies of ids for chatID,
// each sealed with key keyID in the binary form, none holding word.
func assertSealedRows(t *testing.T, rs msgstore.RowStore, chatID string, ids []string, keyID, word string) {
	t.Helper()
	rows, err := rs.GetRows(ctxFor(t), chatID, ids)
	require.NoError(t, err)
	assert.Len(t, rows, len(ids), "one row per stored body")
	prefix := msgstore.BinaryRowPrefix + string(rune(len(keyID))) + keyID
	for id, b := range rows {
		if !assert.True(t, strings.HasPrefix(string(b), prefix), "row %q is sealed with %q", id, keyID) ||
			!assert.NotContains(t, string(b), word, "row %q", id) {
			return
		}
	}
}

// The import of a 10,000-message envelope, its worker killed while ImportChat runs: the
// other worker finishes it, and the chat holds exactly the document's messages, in
// order, once each; its stored bodies stay sealed.
func TestEncryptedImportSurvivesAWorkerKilledMidImport(t *testing.T) {
	f := ringFile(t, "k1")
	w := newEncryptedWorkers(t, f, nil, "")
	first := w.start(t)
	orig := bigChatDocument(bigChatMessages)
	plain, digest, err := chatstate.Encode(orig)
	require.NoError(t, err)
	sealed, err := w.client.SealDocument(plain, digest)
	require.NoError(t, err)
	require.True(t, envelope.IsEnvelope(sealed))
	path := filepath.Join(t.TempDir(), "sealed.json")
	require.NoError(t, os.WriteFile(path, sealed, 0o600))

	id := testenv.ChatID(t)
	t.Cleanup(func() { _ = w.client.Temporal().TerminateWorkflow(context.Background(), id, "", "test over") })
	done := make(chan error, 1)
	var st agentchat.StateResult
	go func() {
		var err error
		st, err = w.client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: id, Path: path})
		done <- err
	}()
	killMidActivity(t, w.client, id, wire.ImportChatActivity, first)
	killed := time.Now()
	w.start(t)
	require.NoError(t, awaitDone(t, done))
	t.Logf("import done %s after the kill", time.Since(killed).Round(time.Millisecond))

	assert.Equal(t, bigChatMessages, st.MessageCount)
	assert.Equal(t, bigChatMessages/2, st.TurnCount)
	assert.Equal(t, digest, st.RestoredDigest)
	hist, err := w.client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, bigChatMessages, hist.Total)
	assert.Equal(t, messageIDs(orig.History), messageIDs(hist.Messages), "every message once, in order")
	assert.True(t, historiesEqual(orig.History, hist.Messages), "the bodies are the document's")

	// The import writes the messages before the last turns as pages, and the bodies of
	// the rest but the latest 32 as rows (activities.importKeepInline): all sealed.
	base := wire.ImportBoundary(orig.History, wire.WindowMessages)
	var stored []string
	for _, m := range orig.History[base : len(orig.History)-32] {
		stored = append(stored, m.MessageID)
	}
	assertSealedRows(t, w.store, id, stored, "k1", orig.History[base].Text())
	d, err := w.client.Temporal().DescribeWorkflowExecution(ctxFor(t), id, "")
	require.NoError(t, err)
	lineage := d.GetWorkflowExecutionInfo().GetExecution().GetRunId() + "-i1"
	prefix := msgstore.BinaryRowPrefix + string(rune(len("k1"))) + "k1"
	pages := 0
	for ; ; pages++ {
		row, err := w.store.GetPage(ctxFor(t), id, msgstore.PageKey{Lineage: lineage, Seq: int64(pages)}) // as stored
		if errors.Is(err, msgstore.ErrPageMissing) {
			break
		}
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(string(row), prefix), "page %d is sealed with k1", pages)
		require.NotContains(t, string(row), orig.History[0].Text(), "page %d", pages)
	}
	assert.Equal(t, (base+wire.PageMessages-1)/wire.PageMessages, pages, "every paged message is in a sealed page, each page once")
}

// A chat whose restore the worker refuses (the envelope at the path was tampered with
// after the client read it, here: given to the workflow by a raw Temporal client) fails
// at its start with the refusal, writes no store row, and leaves its id free for a
// good import.
func TestEncryptedImportRefusedByTheWorkerLeavesNothingBehind(t *testing.T) {
	f := ringFile(t, "k1")
	w := newEncryptedWorkers(t, f, nil, "")
	w.start(t)
	orig := bigChatDocument(2000) // over importInlineBytes: its bodies would be stored
	plain, digest, err := chatstate.Encode(orig)
	require.NoError(t, err)
	sealed, err := w.client.SealDocument(plain, digest)
	require.NoError(t, err)
	var e envelope.Envelope
	require.NoError(t, json.Unmarshal(sealed, &e))
	e.Ciphertext = e.Ciphertext[:len(e.Ciphertext)/2] + flipBase64(e.Ciphertext[len(e.Ciphertext)/2]) + e.Ciphertext[len(e.Ciphertext)/2+1:]
	tampered, err := json.Marshal(e)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "tampered.json")
	require.NoError(t, os.WriteFile(path, tampered, 0o600))

	id := testenv.ChatID(t)
	in := wire.AgentChatInput{Version: wire.InputVersion, Participants: []string{"helper"},
		Restore: &wire.DocumentSource{URI: transfer.FileURI(path)}}
	run, err := w.client.Temporal().ExecuteWorkflow(ctxFor(t), client.StartWorkflowOptions{ID: id, TaskQueue: w.opts.TaskQueue}, wire.WorkflowType, in)
	require.NoError(t, err)
	err = run.Get(ctxFor(t), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not authenticate")
	assert.Equal(t, wire.ErrTypeInvalidDocument, appType(err))
	st, err := w.client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, wire.StatusFailed, st.Status)
	assert.Zero(t, st.MessageCount)
	rows, err := w.store.GetRows(ctxFor(t), id, messageIDs(orig.History))
	require.NoError(t, err)
	assert.Empty(t, rows, "no body of the refused document was stored")

	path = filepath.Join(t.TempDir(), "good.json")
	require.NoError(t, os.WriteFile(path, sealed, 0o600))
	st, err = w.client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: id, Path: path})
	require.NoError(t, err, "the failed start left the id free")
	assert.Equal(t, 2000, st.MessageCount)
}

// flipBase64 returns another base64 digit than c.
func flipBase64(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

// The export of a 10,000-message chat whose bodies are in the store, by a client that
// lacks the store (the ExportChat activity writes it), its worker killed while
// ExportChat runs: the other worker writes it, and the envelope, signed, opens to
// exactly the chat's document.
func TestEncryptedExportSurvivesAWorkerKilledMidExport(t *testing.T) {
	f := ringFile(t, "k1")
	sf, _, err := envelope.GenerateSigner("s1")
	require.NoError(t, err)
	w := newEncryptedWorkers(t, f, &sf, "")
	first := w.start(t)
	orig := bigChatDocument(bigChatMessages)
	plain, _, err := chatstate.Encode(orig)
	require.NoError(t, err)
	id := testenv.ChatID(t)
	path := filepath.Join(t.TempDir(), "seed.json")
	require.NoError(t, os.WriteFile(path, plain, 0o600))
	_, err = w.client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: id, Path: path})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.client.Temporal().TerminateWorkflow(context.Background(), id, "", "test over") })

	c := w.withoutStore(t)
	done := make(chan struct {
		e   agentchat.ExportedDocument
		err error
	}, 1)
	go func() {
		e, err := c.ExportSealed(ctxFor(t), id)
		done <- struct {
			e   agentchat.ExportedDocument
			err error
		}{e, err}
	}()
	killMidActivity(t, c, id, wire.ExportChatActivity, first)
	killed := time.Now()
	w.start(t)
	res := awaitDone(t, done)
	require.NoError(t, res.err)
	t.Logf("export done %s after the kill", time.Since(killed).Round(time.Millisecond))

	e := res.e
	require.True(t, envelope.IsEnvelope(e.Bytes))
	assert.NotContains(t, string(e.Bytes), orig.History[0].Text())
	opened, info, err := c.OpenDocument(e.Bytes)
	require.NoError(t, err)
	assert.Equal(t, "k1", info.KeyID)
	assert.Equal(t, "s1", info.SignedBy, "signed by the worker's signing key")
	doc, _, err := chatstate.Decode(opened) // checks the digest
	require.NoError(t, err)
	assert.Equal(t, e.Digest, doc.Digest)
	assert.Equal(t, bigChatMessages, e.MessageCount)
	assert.True(t, historiesEqual(orig.History, doc.History), "every message once, in order, whole")
	same, err := chatstate.Digest(sameHeader(doc, orig))
	require.NoError(t, err)
	wantDigest, err := chatstate.Digest(sameHeader(orig, orig))
	require.NoError(t, err)
	assert.Equal(t, wantDigest, same, "participants, channels and strategies came through")

	// The plain Export, through the worker that took over, is the same chat (its
	// exportedAt, and so its digest, are its own).
	b, digest, err := c.Export(ctxFor(t), id)
	require.NoError(t, err)
	again, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	assert.Equal(t, digest, again.Digest)
	same, err = chatstate.Digest(sameHeader(again, orig))
	require.NoError(t, err)
	assert.Equal(t, wantDigest, same, "the plain export holds the same chat")
}

// A Reencrypt signal sent while a turn runs, and the worker killed during that turn,
// before the hand-over the signal asks for: the other worker finishes the turn and
// continues as new, and every payload of the new run is sealed with the ring's current
// key; a chat whose worker is down when the signal comes hands over once one is back.
// Either way the chat keeps all its messages.
func TestReencryptSurvivesAWorkerKilledBeforeTheHandOver(t *testing.T) {
	model, err := offline.Start(offline.Options{Scripts: map[string][]offline.Reply{"helper": {
		{Text: "first"}, {Text: "slow", Delay: wire.Duration(4 * time.Second)}, {Text: "third"}, {Text: "fourth"}}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = model.Close() })
	config := fmt.Sprintf(`
endpoints:
  local: {baseURL: %q, stream: false}
agents:
  - {id: helper, name: Helper, model: offline, endpoint: local, call: {heartbeatTimeout: 2s, initialInterval: 100ms}}
`, model.URL())
	f1 := ringFile(t, "k1")
	old := newEncryptedWorkers(t, f1, nil, config)
	w1 := old.start(t)
	id := testenv.ChatID(t)
	_, err = old.client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	_, err = old.client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m1", Text: "Hello"})
	require.NoError(t, err)
	w1.Kill()

	// Rotation: k2 becomes current on the workers and the client; k1 stays to decrypt.
	f2 := ringFile(t, "k2")
	f2.Keys["k1"] = f1.Keys["k1"]
	w := newEncryptedWorkers(t, f2, nil, config)
	w.opts.TaskQueue = old.opts.TaskQueue
	w.client = agentchat.NewClient(w.client.Temporal(), agentchat.ClientOptions{TaskQueue: old.opts.TaskQueue, Keys: w.client.Keys()})
	w2 := w.start(t)
	before := runID(t, w.client.Temporal(), id)
	done := sendAsync(t, w.client, id, "m2", "Take your time")
	require.Eventually(t, func() bool { return model.Requests("helper") == 2 }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, w.client.Reencrypt(ctxFor(t), id))
	w3 := w.start(t)
	took, err := killAndAwait(t, w2, done)
	require.NoError(t, err)
	t.Logf("turn done %s after the kill", took.Round(time.Millisecond))
	second := awaitNewRun(t, w.client, id, before)
	assertRunSealedWith(t, w.client.Temporal(), id, second, "k2")
	hist, err := w.client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m1/1", "m2", "m2/1"}, messageIDs(hist.Messages))
	assert.Equal(t, "[offline] helper: slow", hist.Messages[3].Text())

	// No worker when the signal comes: the hand-over waits for one.
	_, err = w.client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m3", Text: "Still there?"})
	require.NoError(t, err)
	w3.Kill()
	require.NoError(t, w.client.Reencrypt(ctxFor(t), id))
	w.start(t)
	third := awaitNewRun(t, w.client, id, second)
	assertRunSealedWith(t, w.client.Temporal(), id, third, "k2")
	res, err := w.client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m4", Text: "And now?"})
	require.NoError(t, err)
	assert.Equal(t, "[offline] helper: fourth", res.Messages[0].Text())
	hist, err = w.client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m1/1", "m2", "m2/1", "m3", "m3/1", "m4", "m4/1"}, messageIDs(hist.Messages))
	assert.Equal(t, 5, model.Requests("helper"), "one call per turn, and one retry of the killed one")
}

// awaitNewRun waits until the chat's current run is another than before and returns it.
func awaitNewRun(t *testing.T, c *agentchat.Client, id, before string) string {
	t.Helper()
	var now string
	require.Eventually(t, func() bool {
		now = runID(t, c.Temporal(), id)
		return now != before
	}, 60*time.Second, 100*time.Millisecond, "the chat continues as new")
	return now
}

// assertRunSealedWith checks that every payload of the run's history that the codec
// encodes (all but search attributes, which Temporal indexes and the codec never sees)
// is encrypted with key keyID.
func assertRunSealedWith(t *testing.T, tc client.Client, id, run, keyID string) {
	t.Helper()
	testenv.WaitIdle(t, tc, id)
	it := tc.GetWorkflowHistory(ctxFor(t), id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	payloads := 0
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		testenv.WalkMessages(ev.ProtoReflect(), func(m protoreflect.Message) bool {
			switch p := m.Interface().(type) {
			case *commonpb.SearchAttributes:
				return false
			case *commonpb.Payload:
				payloads++
				assert.Equal(t, codec.EncodingEncrypted, string(p.GetMetadata()["encoding"]), "event %d %s", ev.GetEventId(), ev.GetEventType())
				assert.Equal(t, keyID, string(p.GetMetadata()[codec.MetadataKeyID]), "event %d %s", ev.GetEventId(), ev.GetEventType())
				return false
			}
			return true
		})
	}
	require.NotZero(t, payloads)
	t.Logf("run %s: %d payloads, all under %q", run, payloads, keyID)
}

// A large import the restore refuses stores no body: the first page refuses what the
// restore would refuse once it has every page, before the pages store their bodies.
// No row of the failed chat is left, and a later import under the id, of another
// document, is not refused as a conflict with them. The causes: a history that ends
// with a tool call of an agent the chat lacks, and a strategy state of the chat's own
// strategy type that does not decode as that type's state.
func TestImportRefusedAfterItsPagesLeavesNoStoreRows(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*chatstate.Document)
		want   string
	}{
		"open call of an agent the chat lacks": {func(d *chatstate.Document) {
			d.History = append(d.History,
				chat.Message{MessageID: "late", Role: chat.RoleUser, Contents: []chat.Content{chat.Text("Look it up")}},
				chat.Message{MessageID: "late/1", Role: chat.RoleAssistant, AgentID: "clerk",
					Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: "c1", Name: "lookup_order", Arguments: `{}`}}})
		}, "not a participant of this chat"},
		"selection state of the wrong type": {func(d *chatstate.Document) {
			d.Strategies.Selection = chatstate.Strategy{Type: "sequential", State: json.RawMessage(`{"nextIndex":"one"}`)}
		}, "strategies.selection.state"},
		"termination state of the wrong type": {func(d *chatstate.Document) {
			d.Strategies.Termination = chatstate.Strategy{Type: "maxIterations", State: json.RawMessage(`{"iterations":[1]}`)}
		}, "strategies.termination.state"},
	} {
		t.Run(name, func(t *testing.T) {
			h := testenv.New(t, testenv.Options{Keys: testRing(t, "k1")})
			orig := bigChatDocument(2000)
			tc.mutate(&orig)
			plain, digest, err := chatstate.Encode(orig)
			require.NoError(t, err)
			sealed, err := h.Client.SealDocument(plain, digest)
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "refused.json")
			require.NoError(t, os.WriteFile(path, sealed, 0o600))

			id := testenv.ChatID(t)
			_, err = h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: id, Path: path})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			rs, ok := h.MessageStore.(msgstore.RowStore)
			require.True(t, ok)
			rows, err := rs.GetRows(ctxFor(t), id, messageIDs(orig.History))
			require.NoError(t, err)
			assert.Equal(t, 0, len(rows), "the refused import stored bodies")

			other := bigChatDocument(2000) // the same message ids, other bodies, stored too
			for i := range other.History {
				other.History[i].Contents = []chat.Content{chat.Text(fmt.Sprintf("other body %d: %s", i, strings.Repeat("x", 400)))}
			}
			b, _, err := chatstate.Encode(other)
			require.NoError(t, err)
			require.Greater(t, len(b), wire.ImportInlineBytes, "over the size whose bodies an import stores")
			st := importBytes(t, ctxFor(t), h, id, b)
			assert.Equal(t, 2000, st.MessageCount)
		})
	}
}
