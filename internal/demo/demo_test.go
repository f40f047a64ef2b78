package demo_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/demo"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/keyring"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The demo against a running server: it must not start another, and its narration must
// show each part of the main job with the model's real answers.
func TestDemoPlaysEveryPart(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-must-not-be-used") // --offline wins over a key
	t.Setenv("TEMPORAL_UI_URL", "http://ui.example")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	dataDir := t.TempDir()
	err := demo.Run(ctx, demo.Options{Out: &out, Offline: true, DataDir: dataDir,
		Dial: agentchat.DialOptions{Address: testenv.Address(t)}})
	require.NoError(t, err, out.String())
	text := out.String()

	assert.Contains(t, text, "using the server at "+testenv.Address(t))
	assert.Contains(t, text, "offline model (built-in, deterministic")
	// The thread's third reply used the earlier turns.
	assert.Regexp(t, `Helper: +\[offline\] helper received 6 messages\..*you said "My name is Alice"`, text)
	assert.Contains(t, text, "its workflow is now completed")
	// Group chat: the reviewer's script approves on its second reply.
	assert.Regexp(t, `(?s)Writer: .*Reviewer: +\[offline\] reviewer: Suggestion.*Writer: .*Reviewer: +\[offline\] reviewer: APPROVED`, text)
	assert.Contains(t, text, "the chat is complete")
	// Streaming: a reply as it is written, then a turn stopped half-way.
	assert.Contains(t, text, "Storyteller: [offline] storyteller: Once upon a time a small lighthouse kept watch over a quiet harbour")
	assert.Regexp(t, `(?s)stopped once 12 deltas are in.*Storyteller: \[offline\] storyteller: Long ago, .*turn story-2 stopped.*marked incomplete \(true\): 1[2-9] text deltas`, text)
	assert.NotContains(t, text, "each one telling a different story", "the long story was stopped before its end")
	// Save and resume, then migration: each time the next reply lists the whole earlier conversation.
	recap := `We talked about: "Hello, how are you?", "My name is Alice", "What's my name?".`
	assert.Regexp(t, `(?s)4\. Save and resume.*exported .*demo-thread-[0-9a-f]{8}\.json: \d+ bytes, sha256:[0-9a-f]{64}.*restored into demo-restored-[0-9a-f]{8}: 6 messages in 3 turns.*`+regexp.QuoteMeta(recap), text)
	assert.Regexp(t, `(?s)5\. Migrate the thread to namespace "agentchat-demo-b".*migrated demo-thread-[0-9a-f]{8} to namespace "agentchat-demo-b" \(6 messages.*`+regexp.QuoteMeta(recap)+`.*a turn sent to the old place is refused: .*has migrated to namespace "agentchat-demo-b"`, text)
	assert.Contains(t, text, `"messageCount": 8`)
	links := regexp.MustCompile(`http://ui\.example/namespaces/(default|agentchat-demo-b)/workflows/demo-(thread|run|group|restored)-[0-9a-f]{8}/[0-9a-f-]{36}/history`).FindAllString(text, -1)
	assert.Len(t, links, 5, text)
	// The workers keep their files in the data folder, not in the working directory.
	assert.FileExists(t, filepath.Join(dataDir, "messages.db"))
	assert.NoDirExists(t, ".agentchat")
	assert.NotContains(t, text, "keeps running", "the demo did not start a server, so it has none to leave running")
	// Its closing hint's commands go on with its chats, the story chat too.
	keepTalking(t, text)
}

// The demo with a key ring: it says encryption is on, every part still plays, and the
// exported file holds no chat text.
func TestDemoWithEncryption(t *testing.T) {
	f, err := keyring.Generate("demo-k1")
	require.NoError(t, err)
	ring, err := keyring.New(f)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	dataDir := t.TempDir()
	err = demo.Run(ctx, demo.Options{Out: &out, Offline: true, DataDir: dataDir,
		Dial: agentchat.DialOptions{Address: testenv.Address(t), Keys: ring}})
	require.NoError(t, err, out.String())
	assert.Contains(t, out.String(), `encryption`)
	assert.Contains(t, out.String(), `sealed with key "demo-k1"`)
	assert.Regexp(t, `you said "My name is Alice"`, out.String())
	files, err := filepath.Glob(filepath.Join(dataDir, "exports", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "Alice", name)
	}
}
