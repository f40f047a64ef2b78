package idspill_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/idspill"
)

// A Set answers every Put and Get as a map does, over seeded sequences of operations
// whose keys repeat (the full 64-bit range, negative values as a signed column reads
// them included), past many batches written to the file; its file has no name while
// it is open (so a process killed part-way leaves none), and a closed Set refuses
// with an error.
func TestASetIsAMap(t *testing.T) {
	dir := t.TempDir()
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 3))
		s, err := idspill.Open(dir)
		require.NoError(t, err)
		want := map[chatstate.IDKey]int64{}
		// Enough keys to fill several batches, half of them sharing the top bits of
		// another (so the filter sends their look-ups to the file, which lacks them).
		keys := make([]chatstate.IDKey, 1+r.IntN(3000))
		for i := range keys {
			keys[i] = chatstate.IDKey{r.Uint64(), r.Uint64()}
			if i > 0 && r.IntN(2) == 0 {
				o := keys[r.IntN(i)]
				keys[i] = chatstate.IDKey{o[0] ^ r.Uint64N(1<<20), o[1] ^ r.Uint64N(1<<20)}
			}
		}
		for op := range 8000 {
			k, v := keys[r.IntN(len(keys))], r.Int64()-r.Int64()
			if r.IntN(3) == 0 {
				got, ok, err := s.Get(k)
				require.NoError(t, err)
				w, wok := want[k]
				require.Equal(t, wok, ok, "seed %d op %d: Get", seed, op)
				require.Equal(t, w, got, "seed %d op %d: Get", seed, op)
				continue
			}
			first, dup, err := s.Put(k, v)
			require.NoError(t, err)
			w, wdup := want[k]
			if !wdup {
				want[k], w = v, v
			}
			require.Equal(t, wdup, dup, "seed %d op %d: Put", seed, op)
			require.Equal(t, w, first, "seed %d op %d: Put", seed, op)
		}
		path := s.Path()
		assert.NoFileExists(t, path, "the name goes once SQLite has the file open: a killed process leaves nothing")
		require.NoError(t, s.Close())
		require.NoError(t, s.Close(), "a second Close does nothing")
		_, _, err = s.Put(keys[0], 1)
		assert.ErrorContains(t, err, "closed")
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "every file removed")
}

// Open in a folder that does not exist fails, naming the folder's problem.
func TestOpenInAMissingFolderFails(t *testing.T) {
	_, err := idspill.Open(t.TempDir() + "/missing")
	assert.ErrorContains(t, err, "idspill: create a temporary file")
}

// history is n text messages in turns, user then assistant, with a call and its result
// every tenth turn; dupAt, when > 0, gives message dupAt the id of message dupOf, and
// callDupAt, when > 0, gives the call of the turn at message callDupAt the call id of
// the first call.
func history(n, dupAt, dupOf, callDupAt int) []chat.Message {
	at := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	var h []chat.Message
	firstCall := ""
	for len(h) < n {
		i := len(h)
		id := fmt.Sprintf("t%d", i)
		h = append(h, chat.TextMessage(id, chat.RoleUser, "", "q"))
		if i%20 == 0 && len(h)+2 < n {
			call := fmt.Sprintf("call_%d", i)
			if firstCall == "" {
				firstCall = call
			} else if callDupAt > 0 && i >= callDupAt && i < callDupAt+20 {
				call = firstCall
			}
			h = append(h,
				chat.Message{MessageID: id + "/1", Role: chat.RoleAssistant, AgentID: "a", CreatedAt: at,
					Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: call, Name: "f", Arguments: "{}"}}},
				chat.Message{MessageID: id + "/2", Role: chat.RoleTool, AgentID: "a", CreatedAt: at,
					Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: call, Result: "ok"}}})
		}
		h = append(h, chat.TextMessage(id+"/a", chat.RoleAssistant, "A", "a"))
	}
	h = h[:n]
	if dupAt > 0 {
		h[dupAt].MessageID = h[dupOf].MessageID
	}
	return h
}

func document(h []chat.Message) chatstate.Document {
	return chatstate.Document{SchemaVersion: chatstate.SchemaVersion, ChatID: "spill",
		ExportedAt: time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC), History: h,
		Source:       chatstate.Source{Namespace: "default", WorkflowID: "spill", RunID: "run-1"},
		Participants: []chatstate.Participant{{ID: "a", Name: "A", Type: "chat_completion"}},
		Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential"},
			Termination: chatstate.Strategy{Type: "maxIterations"}}}
}

// A document past chatstate.SpillAfter message and call ids, read by a Decoder and
// written by an Encoder whose ids spill to Sets, is read and written as Decode and
// Encode do; a message id or a call id taken twice where both are past the threshold
// (so in the spill) is refused with Decode's and Encode's error; no spill file is
// left, whatever the outcome.
func TestDocumentsPastTheThresholdSpill(t *testing.T) {
	n := chatstate.SpillAfter + 300
	for name, h := range map[string][]chat.Message{
		"valid":                      history(n, 0, 0, 0),
		"message id taken twice":     history(n, n-5, chatstate.SpillAfter+100, 0),
		"at the threshold, and over": history(n, chatstate.SpillAfter+1, chatstate.SpillAfter, 0),
		"call id taken twice":        history(n, 0, 0, chatstate.SpillAfter+200),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			opened := 0
			open := func() (chatstate.IDSpill, error) {
				opened++
				return idspill.Open(dir)
			}
			d := document(h)
			want, wantDigest, wantErr := chatstate.Encode(d)
			f, err := os.CreateTemp(t.TempDir(), "doc-*.json")
			require.NoError(t, err)
			defer f.Close()
			hist := d.History
			d.History = nil
			_, digest, err := chatstate.NewEncoder(f).SpillIDs(open).Encode(d, chatstate.SliceHistory(hist))
			if name == "valid" {
				require.NoError(t, wantErr)
			} else {
				require.Error(t, wantErr, "a document Encode refuses")
			}
			if wantErr != nil {
				require.Error(t, err)
				assert.Equal(t, wantErr.Error(), err.Error())
			} else {
				require.NoError(t, err)
				written, err := os.ReadFile(f.Name())
				require.NoError(t, err)
				assert.True(t, bytes.Equal(want, written), "the Encoder wrote what Encode writes")
				assert.Equal(t, wantDigest, digest)
			}
			entries, _ := os.ReadDir(dir)
			assert.Empty(t, entries, "the Encoder's spills are removed")
			assert.Positive(t, opened, "the Encoder spilled")

			if wantErr != nil { // a document to read: written without Validate's refusal
				return
			}
			wantDoc, _, wantDecErr := chatstate.Decode(want)
			require.NoError(t, wantDecErr)
			dec := chatstate.NewDecoder(bytes.NewReader(want), int64(len(want))).SpillIDs(open)
			opened = 0
			got, _, err := dec.Header()
			require.NoError(t, err)
			assert.Equal(t, wantDoc.Digest, got.Digest)
			entries, _ = os.ReadDir(dir)
			assert.Empty(t, entries, "the Decoder's spills are removed")
			assert.Positive(t, opened, "the Decoder spilled")
		})
	}
}
