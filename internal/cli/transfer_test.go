package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
)

// The two user messages seedChat sends, and the reply to a recap after them.
const (
	firstUser  = "Hello, how are you?"
	secondUser = "My name is Alice"
	recapAsk   = "What did we talk about?"
	recapReply = `We talked about: "` + firstUser + `", "` + secondUser + `".`
)

var digestRe = `sha256:[0-9a-f]{64}`

// seedChat starts a helper chat through the command line and plays two turns.
func seedChat(t *testing.T, h *testenv.Harness, id string) {
	t.Helper()
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	ok(t, h, "send", "--chat", id, "--id", "m1", firstUser)
	ok(t, h, "send", "--chat", id, "--id", "m2", "--author", "Alice", secondUser)
}

// exportFile seeds a chat, exports it to a file with the export command and returns
// the chat id, the file and the digest the command printed.
func exportFile(t *testing.T, h *testenv.Harness) (id, path, digest string) {
	t.Helper()
	id = testenv.ChatID(t)
	seedChat(t, h, id)
	path = filepath.Join(t.TempDir(), "chat.json")
	r := ok(t, h, "export", "--chat", id, "--out", path)
	require.Len(t, r.lines(), 1, r.out)
	m := regexp.MustCompile(`^exported chat ` + regexp.QuoteMeta(id) + ` to ` + regexp.QuoteMeta(path) +
		`: 4 messages, 0 pending turns, (\d+) bytes, (` + digestRe + `)$`).FindStringSubmatch(r.lines()[0])
	require.NotNil(t, m, r.out)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(len(b)), m[1], "the printed size is the file's")
	return id, path, m[2]
}

// tamper writes a copy of the document at path with old replaced by new, once.
func tamper(t *testing.T, path, old, new string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(b), old), "%q once in the document", old)
	out := filepath.Join(t.TempDir(), "tampered.json")
	require.NoError(t, os.WriteFile(out, []byte(strings.Replace(string(b), old, new, 1)), 0o644))
	return out
}

func TestExportWritesTheDocument(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id, path, digest := exportFile(t, h)

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	doc, rep, err := chatstate.Decode(b)
	require.NoError(t, err)
	assert.Empty(t, rep.Repairs)
	assert.Equal(t, digest, doc.Digest, "the printed digest is the document's")
	assert.Equal(t, id, doc.ChatID)
	assert.Equal(t, "default", doc.Source.Namespace)
	require.Len(t, doc.History, 4)
	assert.Equal(t, []string{"m1", "m1/1", "m2", "m2/1"}, messageIDs(doc.History))
	assert.Equal(t, firstUser, doc.History[0].Text())
	assert.Equal(t, "Alice", doc.History[2].AuthorName)
	assert.Equal(t, secondUser, doc.History[2].Text())
	assert.True(t, strings.HasPrefix(doc.History[3].Text(), "[offline] helper received 4 messages."), doc.History[3].Text())
	assert.Equal(t, []chatstate.Participant{{ID: "helper", Name: "Helper", Type: "chat_completion"}}, doc.Participants)
	assert.Empty(t, doc.PendingTurns)
	assert.NotContains(t, string(b), "You are a helpful assistant", "agent instructions never leave the worker")

	// "--out -" prints the same document, and only it, to Out.
	r := ok(t, h, "export", "--chat", id, "--out", "-")
	require.True(t, strings.HasSuffix(r.out, "}\n"), r.out)
	assert.Equal(t, 1, strings.Count(r.out, "\n"), "one document, one line")
	printed, _, err := chatstate.Decode([]byte(r.out))
	require.NoError(t, err)
	assert.True(t, printed.ExportedAt.After(doc.ExportedAt) || printed.ExportedAt.Equal(doc.ExportedAt))
	printed.ExportedAt, doc.ExportedAt = time.Time{}, time.Time{}
	printed.Digest, doc.Digest = "", ""
	assert.Equal(t, doc, printed, "stdout and file hold the same document but for exportedAt and digest")
}

func TestExportErrors(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	line := fails(t, h, "export", "--chat", "missing-"+testenv.ChatID(t), "--out", filepath.Join(t.TempDir(), "x.json"))
	assert.Contains(t, line, "not found")
	line = fails(t, h, "export", "--chat", "x")
	assert.Contains(t, line, `required flag(s) "out" not set`)

	id := testenv.ChatID(t)
	seedChat(t, h, id)
	line = fails(t, h, "export", "--chat", id, "--out", filepath.Join(t.TempDir(), "no", "such", "dir", "x.json"))
	assert.Contains(t, line, "no such file or directory")
}

func TestParticipantsChecksTheDocument(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id, path, digest := exportFile(t, h)

	// No server needed: run it without --address.
	r := execute(t, "", "participants", "--in", path)
	require.Equal(t, 0, r.code, "%v", r)
	assert.Empty(t, r.err)
	lines := r.lines()
	require.Len(t, lines, 3, r.out)
	assert.Equal(t, "chat "+id+" from namespace default: 4 messages, 0 pending turns, digest "+digest+" (valid)", lines[0])
	assert.Equal(t, []string{"participant", "helper", "Helper", "chat_completion"}, strings.Fields(lines[1]))
	ch := strings.Fields(lines[2])
	require.Len(t, ch, 4, lines[2])
	assert.Equal(t, []string{"channel", "chat_history"}, ch[:2])
	assert.Equal(t, chat.ChannelKey("chat_history", "reducer=none"), ch[2])
	assert.Equal(t, "{}", ch[3])

	r = execute(t, "", "participants", "--in", path, "--json")
	require.Equal(t, 0, r.code, "%v", r)
	got := decode[struct {
		ChatID       string                  `json:"chatId"`
		Participants []chatstate.Participant `json:"participants"`
		Channels     []chatstate.Channel     `json:"channels"`
		MessageCount int                     `json:"messageCount"`
		Digest       string                  `json:"digest"`
		Repairs      []string                `json:"repairs"`
	}](t, r)
	assert.Equal(t, id, got.ChatID)
	assert.Equal(t, []chatstate.Participant{{ID: "helper", Name: "Helper", Type: "chat_completion"}}, got.Participants)
	require.Len(t, got.Channels, 1)
	assert.Equal(t, "chat_history", got.Channels[0].ChannelType)
	assert.Equal(t, ch[2], got.Channels[0].ChannelKey)
	assert.Equal(t, 4, got.MessageCount)
	assert.Equal(t, digest, got.Digest)
	assert.Empty(t, got.Repairs)

	t.Run("tampered", func(t *testing.T) {
		bad := tamper(t, path, `"text":"`+secondUser+`"`, `"text":"My name is Mallory"`)
		line := fails(t, nil, "participants", "--in", bad)
		assert.Contains(t, line, "digest")
		assert.Contains(t, line, digest, "the error gives the digest the document states")
	})
	t.Run("unknown version", func(t *testing.T) {
		bad := tamper(t, path, `"schemaVersion":1`, `"schemaVersion":7`)
		line := fails(t, nil, "participants", "--in", bad)
		assert.Contains(t, line, "schemaVersion")
		assert.Contains(t, line, "7")
	})
	t.Run("missing file", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nope.json")
		line := fails(t, nil, "participants", "--in", missing)
		assert.Contains(t, line, missing)
		assert.Contains(t, line, "no such file")
	})
	t.Run("no --in", func(t *testing.T) {
		line := fails(t, nil, "participants")
		assert.Contains(t, line, `required flag(s) "in" not set`)
	})
}

func TestImportRestoresIntoANewChat(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	src, path, digest := exportFile(t, h)

	dst := testenv.ChatID(t) + "-restored"
	r := ok(t, h, "import", "--chat", dst, "--in", path)
	assert.Equal(t, []string{"restored " + path + " into chat " + dst + ": 4 messages in 2 turns, digest " + digest}, r.lines())

	r = ok(t, h, "send", "--chat", dst, recapAsk)
	require.Len(t, r.lines(), 1, r.out)
	reply := r.lines()[0]
	assert.True(t, strings.HasPrefix(reply, "Helper: [offline] helper received 6 messages."), reply)
	assert.Contains(t, reply, recapReply)

	// The restored chat's history is the source's, then the new turn.
	hist, err := h.Client.History(t.Context(), dst, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Equal(t, 6, hist.Total)
	assert.Equal(t, []string{"m1", "m1/1", "m2", "m2/1"}, messageIDs(hist.Messages[:4]))
	srcHist, err := h.Client.History(t.Context(), src, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, 4, srcHist.Total, "the source is untouched")

	// --json prints the new chat's state.
	st := decode[struct {
		ChatID         string `json:"chatId"`
		MessageCount   int    `json:"messageCount"`
		RestoredDigest string `json:"restoredDigest"`
	}](t, ok(t, h, "import", "--chat", dst+"-json", "--in", path, "--json"))
	assert.Equal(t, dst+"-json", st.ChatID)
	assert.Equal(t, 4, st.MessageCount)
	assert.Equal(t, digest, st.RestoredDigest)

	// Importing into an id that is taken fails and leaves that chat alone.
	line := fails(t, h, "import", "--chat", dst, "--in", path)
	assert.Contains(t, line, "already exists")
	hist, err = h.Client.History(t.Context(), dst, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, 6, hist.Total)
}

func TestImportRefusesABadDocumentAndCreatesNothing(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	_, path, _ := exportFile(t, h)
	for _, tc := range []struct {
		name, old, new, field string
	}{
		{"tampered", `"text":"` + secondUser + `"`, `"text":"My name is Mallory"`, "digest"},
		{"unknown version", `"schemaVersion":1`, `"schemaVersion":7`, "schemaVersion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := tamper(t, path, tc.old, tc.new)
			id := testenv.ChatID(t)
			line := fails(t, h, "import", "--chat", id, "--in", bad)
			assert.Contains(t, line, tc.field)
			_, err := h.Temporal.DescribeWorkflowExecution(t.Context(), id, "")
			require.Error(t, err, "no chat %q was created", id)
			assert.Contains(t, err.Error(), "not found")
		})
	}
	t.Run("missing file", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nope.json")
		line := fails(t, h, "import", "--chat", testenv.ChatID(t), "--in", missing)
		assert.Contains(t, line, missing)
	})
	t.Run("unknown agent", func(t *testing.T) {
		id := testenv.ChatID(t)
		line := fails(t, h, "import", "--chat", id, "--in", path, "--agents", "ghost")
		assert.Contains(t, line, `"ghost"`)
	})
	assert.Equal(t, 2, h.Model.Requests("helper"), "no refused import reached a model")
}

func TestMigrateToAnotherNamespace(t *testing.T) {
	a := testenv.New(t, testenv.Options{})
	ns := "agentchat-cli-test-b"
	b := testenv.New(t, testenv.Options{Namespace: ns, TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	seedChat(t, a, id)

	r := ok(t, a, "migrate", "--chat", id, "--to-namespace", ns)
	require.Len(t, r.lines(), 1, r.out)
	line := r.lines()[0]
	m := regexp.MustCompile(`^migrated chat ` + regexp.QuoteMeta(id) + ` to namespace ` + ns + ` as ` + regexp.QuoteMeta(id) +
		` \(run [0-9a-f-]{36}\): 4 messages, digest (` + digestRe + `)$`).FindStringSubmatch(line)
	require.NotNil(t, m, line)
	st, err := b.Client.State(t.Context(), id)
	require.NoError(t, err)
	assert.Equal(t, m[1], st.RestoredDigest, "the target holds the document the migration printed")

	// The source says where the chat went, on one line.
	errLine := fails(t, a, "send", "--chat", id, "hello?")
	assert.Contains(t, errLine, "migrated")
	assert.Contains(t, errLine, `namespace "`+ns+`"`)

	// Following the source gives its events, then says where to follow it.
	f := starter(t, a, "", "--timeout", "30s", "follow", "--chat", id)
	require.Equal(t, 1, f.code, "%v", f)
	assert.Contains(t, f.out, "Helper: [offline]", "the source's events")
	assert.Contains(t, f.err, `namespace "`+ns+`"`)
	assert.Contains(t, f.err, "(follow it there: go run ./starter follow --namespace "+ns+" --chat "+id+")")

	// In the target, the chat remembers.
	r = ok(t, a, "--namespace", ns, "send", "--chat", id, recapAsk)
	require.Len(t, r.lines(), 1, r.out)
	assert.True(t, strings.HasPrefix(r.lines()[0], "Helper: [offline] helper received 6 messages."), r.out)
	assert.Contains(t, r.out, recapReply)
	assert.Equal(t, 1, b.Model.Requests("helper"), "the target's worker answered")

	// Migrating again reports the same migration.
	again := ok(t, a, "migrate", "--chat", id, "--to-namespace", ns)
	assert.Equal(t, r0(again), line)

	// ...and the target's state says where it came from; the source is closed.
	src := decode[struct {
		Status string `json:"status"`
	}](t, ok(t, a, "state", "--chat", id, "--json"))
	assert.Equal(t, "migrated", src.Status)

	// Text state says where it went too, and how to read it there.
	text := ok(t, a, "state", "--chat", id)
	assert.Contains(t, text.out, "status:        migrated\n")
	assert.Regexp(t, `(?m)^migrated to:   namespace `+ns+` as chat `+regexp.QuoteMeta(id)+` \(run [0-9a-f-]{36}\); `+
		`read it there: go run ./starter --namespace `+ns+` state --chat `+regexp.QuoteMeta(id)+`$`, text.out)
}

// r0 is the first line of Out.
func r0(r result) string {
	if ls := r.lines(); len(ls) > 0 {
		return ls[0]
	}
	return ""
}

func TestMigrateNeedsATarget(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	seedChat(t, h, id)
	line := fails(t, h, "migrate", "--chat", id)
	assert.Contains(t, line, "--to-namespace")
	assert.Contains(t, line, "--to-cluster")
	assert.Contains(t, line, "--to-address")
	assert.Contains(t, line, "--to-chat")
	// Checked before dialing: no server needed to learn it.
	assert.Equal(t, line, fails(t, nil, "--address", "127.0.0.1:1", "migrate", "--chat", id))

	line = fails(t, h, "migrate", "--chat", id, "--to-cluster", "east", "--to-address", "127.0.0.1:1")
	assert.Contains(t, line, "not both")

	line = fails(t, h, "migrate", "--chat", "missing-"+id, "--to-namespace", "elsewhere")
	assert.Contains(t, line, "not found")

	// The chat goes on where it was.
	r := ok(t, h, "send", "--chat", id, recapAsk)
	assert.Contains(t, r.out, recapReply)
}

// --to-chat alone moves the chat to a new id in the same namespace, as the flag's
// help says of --to-namespace ("default: the same").
func TestMigrateToANewChatIDInTheSameNamespace(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	seedChat(t, h, id)
	r := ok(t, h, "migrate", "--chat", id, "--to-chat", id+"-v2")
	assert.Contains(t, r.out, id+"-v2")
	r = ok(t, h, "send", "--chat", id+"-v2", recapAsk)
	assert.Contains(t, r.out, recapReply, "the moved chat remembers")
	assert.Contains(t, fails(t, h, "send", "--chat", id, "Hello?"), id+"-v2", "the old id names where the chat went")
}

func TestMigrateToAClusterByAddress(t *testing.T) {
	second := testenv.SecondCluster(t)
	a := testenv.New(t, testenv.Options{Clusters: map[string]string{"east": second}})
	b := testenv.New(t, testenv.Options{Address: second, TaskQueue: a.TaskQueue})

	t.Run("unknown address", func(t *testing.T) {
		id := testenv.ChatID(t)
		seedChat(t, a, id)
		line := fails(t, a, "migrate", "--chat", id, "--to-address", "127.0.0.1:1")
		assert.Contains(t, line, "no cluster at 127.0.0.1:1")
		assert.Contains(t, line, "the chat goes on here")
		r := ok(t, a, "send", "--chat", id, recapAsk)
		assert.Contains(t, r.out, recapReply)
	})

	id := testenv.ChatID(t)
	seedChat(t, a, id)
	r := ok(t, a, "migrate", "--chat", id, "--to-address", second)
	require.Len(t, r.lines(), 1, r.out)
	assert.Regexp(t, `^migrated chat `+regexp.QuoteMeta(id)+` to cluster at `+regexp.QuoteMeta(second)+`, namespace default as `+
		regexp.QuoteMeta(id)+` \(run [0-9a-f-]{36}\): 4 messages, digest `+digestRe+`$`, r.lines()[0])

	errLine := fails(t, a, "send", "--chat", id, "hello?")
	assert.Contains(t, errLine, "the cluster at "+second)

	// The last --address wins: talk to the chat on the second cluster.
	r = ok(t, a, "--address", second, "send", "--chat", id, recapAsk)
	assert.Contains(t, r.out, "received 6 messages")
	assert.Contains(t, r.out, recapReply)
	assert.Equal(t, 1, b.Model.Requests("helper"))
}

func TestTransferHelp(t *testing.T) {
	for _, tc := range []struct{ cmd, example string }{
		{"export", "starter export --chat support-42 --out support-42.json"},
		{"import", "starter import --chat support-42b --in support-42.json"},
		{"participants", "starter participants --in support-42.json"},
		{"migrate", "starter migrate --chat support-42 --to-namespace archive"},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			r := execute(t, "", tc.cmd, "--help")
			require.Equal(t, 0, r.code, "%v", r)
			assert.Empty(t, r.err)
			assert.Contains(t, r.out, "Usage:\n  starter "+tc.cmd)
			assert.Contains(t, r.out, "Examples:\n")
			assert.Contains(t, r.out, tc.example)
		})
	}
}
