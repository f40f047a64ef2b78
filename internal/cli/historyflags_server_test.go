package cli_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// pagedWithin is how many turns of one agent the README's small-window start command
// (--window-messages 8 --page-messages 4 --max-events 60) may take to write pages: 8
// on the dev server, and 2 of slack.
const pagedWithin = 10

// A chat started with the history flags has them (State says so, as JSON and for
// people), writes pages within a few turns, and reads whole through them.
func TestStartHistoryFlagsWritePagesWithinAFewTurns(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "messages.db")
	h := testenv.New(t, testenv.Options{MessageStoreURL: url})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper",
		"--window-messages", "8", "--page-messages", "4", "--max-events", "60")

	state := func() agentchat.StateResult {
		return decode[agentchat.StateResult](t, ok(t, h, "--message-store", url, "state", "--chat", id, "--json"))
	}
	st := state()
	assert.Equal(t, &wire.HistoryWindow{WindowMessages: 8, PageMessages: 4, IndexFanout: wire.IndexFanout}, st.History)
	assert.Equal(t, &wire.HistoryBudget{MaxEvents: 60, MaxBytes: wire.DefaultMaxHistoryBytes}, st.HistoryBudget)

	turns := 0
	for turns < pagedWithin && st.PagedMessages == 0 {
		turns++
		ok(t, h, "send", "--chat", id, "--id", fmt.Sprintf("t%d", turns), fmt.Sprintf("turn %d", turns))
		st = state()
	}
	t.Logf("pages written after %d turns: %d of %d messages paged", turns, st.PagedMessages, st.MessageCount)
	require.Positive(t, st.PagedMessages, "no pages after %d turns", turns)

	human := ok(t, h, "--message-store", url, "state", "--chat", id).out
	assert.Contains(t, human, "history:       window of 8 messages at least, 4 messages a page, index fanout 512\n")
	assert.Contains(t, human, "run budget:    continues as new after 60 events or 4 MiB of history a run\n")
	assert.Contains(t, human, fmt.Sprintf("paged:         the oldest %d messages are in pages", st.PagedMessages))

	hist := decode[agentchat.HistoryResult](t, ok(t, h, "--message-store", url, "history", "--chat", id, "--json"))
	require.Len(t, hist.Messages, st.MessageCount, "history reads the paged messages too")
	assert.Equal(t, "t1", hist.Messages[0].MessageID)
}

// start and import refuse a history flag out of range, naming the flag and the range,
// before they dial Temporal (nothing answers at the address) or read the document.
func TestHistoryFlagsOutOfRangeAreRefusedFirst(t *testing.T) {
	for _, cmd := range [][]string{
		{"start", "--agents", "helper"},
		{"import", "--in", filepath.Join(t.TempDir(), "missing.json")},
	} {
		for _, tt := range []struct{ flag, value, want string }{
			{"--index-fanout", "1", "--index-fanout is 1: it must be 2 to 512"},
			{"--index-fanout", "1000", "--index-fanout is 1000: it must be 2 to 512"},
			{"--page-messages", "300", "--page-messages is 300: it must be 4 to 256"},
			{"--window-messages", "4", "--window-messages is 4: it must be at least 8"},
			{"--max-events", "10", "--max-events is 10: it must be 30 to 50000"},
		} {
			t.Run(cmd[0]+tt.flag+"="+tt.value, func(t *testing.T) {
				line := fails(t, nil, append(append([]string{"--address", "127.0.0.1:1"}, cmd...), tt.flag, tt.value)...)
				assert.Equal(t, "starter: "+tt.want, line)
			})
		}
	}
}

// import takes the history flags: the new chat has them (a document keeps none), and
// its import writes all but the window as pages of that size at once. Without them it
// has the defaults, and a short document is not paged.
func TestImportTakesTheHistoryFlags(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "messages.db")
	h := testenv.New(t, testenv.Options{MessageStoreURL: url})
	src := testenv.ChatID(t)
	ok(t, h, "start", "--chat", src, "--agents", "helper", "--window-messages", "8", "--page-messages", "4")
	for i := 1; i <= 8; i++ {
		ok(t, h, "send", "--chat", src, "--id", fmt.Sprintf("t%d", i), fmt.Sprintf("turn %d", i))
	}
	doc := filepath.Join(t.TempDir(), "doc.json")
	ok(t, h, "--message-store", url, "export", "--chat", src, "--out", doc)

	for _, tt := range []struct {
		name   string
		flags  []string
		window wire.HistoryWindow
		budget wire.HistoryBudget
		paged  bool
	}{
		{"flags", []string{"--window-messages", "8", "--page-messages", "4", "--index-fanout", "2", "--max-events", "100"},
			wire.HistoryWindow{WindowMessages: 8, PageMessages: 4, IndexFanout: 2}, wire.HistoryBudget{MaxEvents: 100, MaxBytes: wire.DefaultMaxHistoryBytes}, true},
		{"defaults", nil,
			wire.HistoryWindow{WindowMessages: wire.WindowMessages, PageMessages: wire.PageMessages, IndexFanout: wire.IndexFanout},
			wire.HistoryBudget{MaxEvents: wire.DefaultMaxEvents, MaxBytes: wire.DefaultMaxHistoryBytes}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := testenv.ChatID(t)
			st := decode[agentchat.StateResult](t, ok(t, h, append([]string{"--message-store", url, "import", "--chat", id, "--in", doc, "--json"}, tt.flags...)...))
			assert.Equal(t, 16, st.MessageCount)
			assert.Equal(t, &tt.window, st.History)
			assert.Equal(t, &tt.budget, st.HistoryBudget)
			if tt.paged {
				assert.Equal(t, 8, st.PagedMessages, "all but the window, in pages of 4")
			} else {
				assert.Zero(t, st.PagedMessages)
			}
			hist := decode[agentchat.HistoryResult](t, ok(t, h, "--message-store", url, "history", "--chat", id, "--json"))
			require.Len(t, hist.Messages, 16)
			assert.Equal(t, "t1", hist.Messages[0].MessageID)
		})
	}
}
