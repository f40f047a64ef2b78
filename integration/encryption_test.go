package integration_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/codec"
	"github.com/agentchat/agentchat/internal/devserver"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/offline"
)

// Encryption at rest on the real server: what the official temporal CLI reads of an
// encrypted chat's history, without and with the codec server; key rotation.

// testRing is a ring of fresh keys with these ids, the last current.
func testRing(t *testing.T, ids ...string) *keyring.Ring {
	t.Helper()
	f, err := keyring.Generate(ids...)
	require.NoError(t, err)
	r, err := keyring.New(f)
	require.NoError(t, err)
	return r
}

// ringFile is a ring file of fresh keys with these ids, the last current.
func ringFile(t *testing.T, ids ...string) keyring.File {
	t.Helper()
	f, err := keyring.Generate(ids...)
	require.NoError(t, err)
	return f
}

// temporalShow runs `temporal workflow show --output json` for the chat, with extra
// arguments; it returns the output and the command's error.
func temporalShow(t *testing.T, chatID string, extra ...string) (string, error) {
	t.Helper()
	cli, err := devserver.FindCLI()
	require.NoError(t, err)
	args := append([]string{"workflow", "show", "--address", testenv.Address(t), "--namespace", "default",
		"--workflow-id", chatID, "--output", "json"}, extra...)
	cmd := exec.CommandContext(ctxFor(t), cli, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String() + errOut.String(), err
}

// readable is everything a reader of the JSON output finds: its strings, and the
// base64-decoded bytes of those that decode (payload data), recursively.
func readable(t *testing.T, out string) string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(out), &v), "temporal's JSON output")
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				b.WriteString(k + "\n")
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			b.WriteString(x + "\n")
			if d, err := base64.StdEncoding.DecodeString(x); err == nil {
				b.Write(d)
				b.WriteString("\n")
			}
		}
	}
	walk(v)
	return b.String()
}

// startCodecServer serves the codec handler on a free port, as `starter codec-server` does.
func startCodecServer(t *testing.T, ring *keyring.Ring, token string) string {
	t.Helper()
	h, err := codec.NewHandler(ring, codec.HandlerOptions{Token: token})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

func TestEncryptedHistoryHoldsNoChatTextWithoutTheCodec(t *testing.T) {
	ring := testRing(t, "k1")
	h := testenv.New(t, testenv.Options{Keys: ring})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	user := "My name is Zebulon Quarterfield"
	send(t, h, id, "m1", user)
	res := send(t, h, id, "m2", "What's my name?")
	reply := res.Messages[0].Text()
	require.Contains(t, reply, "Zebulon", "the model's reply quotes the earlier turn")

	raw, err := temporalShow(t, id)
	require.NoError(t, err, raw)
	seen := readable(t, raw)
	require.Contains(t, seen, codec.EncodingEncrypted, "the payloads are there, encrypted")
	for _, text := range []string{"Zebulon", "Quarterfield", "What's my name", reply} {
		assert.NotContains(t, seen, text, "no chat text in the raw history")
	}

	url := startCodecServer(t, ring, "tok-123")
	decoded, err := temporalShow(t, id, "--codec-endpoint", url, "--codec-auth", "Bearer tok-123")
	require.NoError(t, err, decoded)
	seen = readable(t, decoded)
	assert.Contains(t, seen, user, "the codec server decodes the user's text")
	assert.Contains(t, seen, "Zebulon", "and the model's")

	refused, err := temporalShow(t, id, "--codec-endpoint", url, "--command-timeout", "3s")
	require.Error(t, err, "no token: the codec server refuses, and the CLI shows nothing")
	assert.NotContains(t, refused, "Quarterfield")
	for _, auth := range []string{"", "Bearer wrong"} {
		req, err := http.NewRequestWithContext(ctxFor(t), http.MethodPost, url+"/decode", strings.NewReader(`{"payloads":[]}`))
		require.NoError(t, err)
		req.Header.Set("X-Namespace", "default")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "authorization %q", auth)
	}
}

func TestKeyRotationOldPayloadsDecryptAndReencryptMovesTheChatToTheNewKey(t *testing.T) {
	f1 := ringFile(t, "k1")
	ring1, err := keyring.New(f1)
	require.NoError(t, err)
	a := testenv.New(t, testenv.Options{Keys: ring1})
	id := testenv.ChatID(t)
	_, err = a.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	send(t, a, id, "m1", "My name is Alice")
	a.StopWorker()

	// Rotation: k2 becomes current, k1 stays to decrypt.
	f2 := ringFile(t, "k2")
	f2.Keys["k1"] = f1.Keys["k1"]
	ring2, err := keyring.New(f2)
	require.NoError(t, err)
	b := testenv.New(t, testenv.Options{Keys: ring2, TaskQueue: a.TaskQueue})
	res := send(t, b, id, "m2", "What's my name?")
	assert.Contains(t, res.Messages[0].Text(), "Alice", "the k1 payloads still decrypt")

	before := runID(t, b.Temporal, id)
	require.NoError(t, b.Client.Reencrypt(ctxFor(t), id))
	require.Eventually(t, func() bool { return runID(t, b.Temporal, id) != before }, 30*time.Second, 100*time.Millisecond,
		"the chat continues as new")
	raw, err := temporalShow(t, id)
	require.NoError(t, err, raw)
	var hist struct {
		Events []struct {
			Attrs *struct {
				Input struct {
					Payloads []struct {
						Metadata map[string]string `json:"metadata"`
					} `json:"payloads"`
				} `json:"input"`
			} `json:"workflowExecutionStartedEventAttributes"`
		} `json:"events"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &hist))
	require.NotNil(t, hist.Events[0].Attrs)
	meta := hist.Events[0].Attrs.Input.Payloads[0].Metadata
	keyID, _ := base64.StdEncoding.DecodeString(meta[codec.MetadataKeyID])
	assert.Equal(t, "k2", string(keyID), "the new run's input is sealed with the new key")
	res = send(t, b, id, "m3", "What did we talk about?")
	assert.Contains(t, res.Messages[0].Text(), "My name is Alice", "the chat goes on with all it had")

	// A client whose ring lacks k2 cannot read the chat, and the error names the key.
	onlyOld := testenv.New(t, testenv.Options{Keys: ring1})
	_, err = onlyOld.Client.State(ctxFor(t), id)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"k2"`)
}

func runID(t *testing.T, tc client.Client, id string) string {
	d, err := tc.DescribeWorkflowExecution(ctxFor(t), id, "")
	require.NoError(t, err)
	return d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
}

// A failure that quotes chat text (a tool's error naming its arguments) carries the
// text only in its encoded attributes: the raw history shows "Encoded failure".
func TestEncryptedFailuresCarryNoChatText(t *testing.T) {
	const config = `
tools:
  lookup: {description: "Looks a name up"}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [lookup], call: {initialInterval: 50ms, maxAttempts: 2}}
`
	h := testenv.New(t, testenv.Options{Keys: testRing(t, "k1"), Config: config,
		Tools: map[string]activities.ToolFunc{"lookup": func(_ context.Context, args json.RawMessage) (string, error) {
			return "", activities.ToolError("no record for %s", args)
		}},
		Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
			{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"name":"Quimbleton Farthingale"}`}}}, {}}}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	res := send(t, h, id, "m1", "Find my record")
	require.Len(t, res.Messages, 3)
	assert.Contains(t, res.Messages[1].Contents[0].Error, "no record for", "the client, with the ring, reads the error")

	raw, err := temporalShow(t, id)
	require.NoError(t, err, raw)
	seen := readable(t, raw)
	assert.Contains(t, seen, "Encoded failure", "the activity's failure is in the history, encoded")
	assert.NotContains(t, seen, "Quimbleton")
	assert.NotContains(t, seen, "no record for")
}

// A client without the key ring that starts or imports a chat on workers that encrypt
// writes its input in the clear (a client cannot tell before it writes), then cannot
// read the answer. It used to leave that chat running, its text readable in the
// history, and say only that a payload did not decode. Now it deletes the chat it
// created, so no clear text stays on the server, says why (ErrNoKeyRing), and the
// id is free for a client with the ring. To a chat that exists, it writes nothing: it
// asks the chat first, and its Send, Post and SendStream fail with ErrNoKeyRing.
// (A temporary thread of Run has completed by
// the time its answer fails to decode; the server deletes a closed run later.)
func TestKeylessClientLeavesNoClearTextChat(t *testing.T) {
	ring := testRing(t, "k1")
	h := testenv.New(t, testenv.Options{Keys: ring})
	keyless := agentchat.NewClient(testenv.Dial(t, ""), agentchat.ClientOptions{TaskQueue: h.TaskQueue})
	gone := func(id string) {
		t.Helper()
		require.Eventually(t, func() bool {
			_, err := h.Temporal.DescribeWorkflowExecution(context.Background(), id, "")
			var nf *serviceerror.NotFound
			return errors.As(err, &nf)
		}, 30*time.Second, 100*time.Millisecond, "the clear-text chat %s is still on the server", id)
	}

	id := testenv.ChatID(t)
	_, err := keyless.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.Error(t, err)
	assert.ErrorIs(t, err, agentchat.ErrNoKeyRing)
	assert.Contains(t, err.Error(), keyring.Env)
	gone(id)
	_, err = h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err, "the id is free again")

	// To a chat that exists, the keyless client writes nothing: it asks first.
	_, err = keyless.Send(ctxFor(t), id, agentchat.SendMessageInput{Text: "Zorblax by update"})
	assert.ErrorIs(t, err, agentchat.ErrNoKeyRing)
	_, err = keyless.Post(ctxFor(t), id, agentchat.SendMessageInput{Text: "Zorblax by signal"})
	assert.ErrorIs(t, err, agentchat.ErrNoKeyRing)
	var streamed error
	for _, err := range keyless.SendStream(ctxFor(t), id, agentchat.SendMessageInput{Text: "Zorblax streamed"}) {
		if err != nil {
			streamed = err
			break
		}
	}
	assert.ErrorIs(t, streamed, agentchat.ErrNoKeyRing)
	// Reads say the same: the chat is encrypted and this client has no ring.
	_, err = keyless.State(ctxFor(t), id)
	assert.ErrorIs(t, err, agentchat.ErrNoKeyRing)
	_, err = keyless.History(ctxFor(t), id, agentchat.HistoryInput{})
	assert.ErrorIs(t, err, agentchat.ErrNoKeyRing)
	_, _, err = keyless.Export(ctxFor(t), id)
	assert.ErrorIs(t, err, agentchat.ErrNoKeyRing)
	fctx, cancel := context.WithTimeout(ctxFor(t), 30*time.Second)
	for _, err := range keyless.Follow(fctx, id, 0) {
		assert.ErrorIs(t, err, agentchat.ErrNoKeyRing, "follow")
		break
	}
	cancel()
	raw, err := temporalShow(t, id)
	require.NoError(t, err, raw)
	assert.False(t, strings.Contains(readable(t, raw), "Zorblax"), "a keyless client's text reached the history in the clear")
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Zero(t, st.MessageCount, "nothing of the keyless client's turns was taken")

	doc, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	copyID := id + "-copy"
	_, err = keyless.Import(ctxFor(t), agentchat.ImportOptions{ChatID: copyID, Document: doc})
	require.Error(t, err)
	assert.ErrorIs(t, err, agentchat.ErrNoKeyRing)
	gone(copyID)

	streamID := id + "-stream"
	var streamErr error
	for _, err := range keyless.StartStream(ctxFor(t), agentchat.StartOptions{ChatID: streamID, Participants: []string{"helper"}},
		agentchat.SendMessageInput{Text: "My name is Alice Quimby"}) {
		if err != nil {
			streamErr = err
			break
		}
	}
	require.Error(t, streamErr)
	assert.ErrorIs(t, streamErr, agentchat.ErrNoKeyRing)
	gone(streamID)

	runID := id + "-run"
	_, err = keyless.Run(ctxFor(t), agentchat.RunOptions{ChatID: runID, Agents: []string{"helper"}},
		agentchat.SendMessageInput{Text: "My name is Alice Quimby"})
	require.Error(t, err)
	assert.ErrorIs(t, err, agentchat.ErrNoKeyRing, "a temporary thread has completed by then: its deletion is asked for, and the dev server runs it later")
}
