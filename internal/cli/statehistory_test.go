package cli_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// A chat started without the flags reports the defaults.
func TestStateReportsTheDefaultHistorySettings(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	st := decode[agentchat.StateResult](t, ok(t, h, "start", "--chat", id, "--agents", "helper", "--json"))
	assert.Equal(t, &wire.HistoryWindow{WindowMessages: wire.WindowMessages, PageMessages: wire.PageMessages, IndexFanout: wire.IndexFanout}, st.History)
	assert.Equal(t, &wire.HistoryBudget{MaxEvents: wire.DefaultMaxEvents, MaxBytes: wire.DefaultMaxHistoryBytes}, st.HistoryBudget)
}
