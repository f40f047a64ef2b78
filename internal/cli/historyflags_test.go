package cli

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/wire"
)

// The history flags set only what is given: no window flag leaves the window nil
// (the chat keeps the defaults), and each value is checked against its range, the
// error naming the flag and the range.
func TestHistoryFlagsOptions(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		window  *wire.HistoryWindow
		budget  wire.HistoryBudget
		wantErr string
	}{
		{name: "none"},
		{name: "small window and pages", args: []string{"--window-messages", "8", "--page-messages", "4", "--index-fanout", "2", "--max-events", "60"},
			window: &wire.HistoryWindow{WindowMessages: 8, PageMessages: 4, IndexFanout: 2}, budget: wire.HistoryBudget{MaxEvents: 60}},
		{name: "defaults given", args: []string{"--index-fanout", "512", "--page-messages", "256", "--max-history-bytes", "4194304"},
			window: &wire.HistoryWindow{PageMessages: 256, IndexFanout: 512}, budget: wire.HistoryBudget{MaxBytes: 4 << 20}},
		{name: "budget only", args: []string{"--max-events", "30", "--max-history-bytes", "50331648"},
			budget: wire.HistoryBudget{MaxEvents: 30, MaxBytes: 48 << 20}},
		{name: "large window", args: []string{"--window-messages", "100000"}, window: &wire.HistoryWindow{WindowMessages: 100000}},
		{name: "window too small", args: []string{"--window-messages", "7"}, wantErr: "--window-messages is 7: it must be at least 8"},
		{name: "window zero", args: []string{"--window-messages", "0"}, wantErr: "--window-messages is 0: it must be at least 8"},
		{name: "page too small", args: []string{"--page-messages", "3"}, wantErr: "--page-messages is 3: it must be 4 to 256"},
		{name: "page too large", args: []string{"--page-messages", "257"}, wantErr: "--page-messages is 257: it must be 4 to 256"},
		{name: "fanout too small", args: []string{"--index-fanout", "1"}, wantErr: "--index-fanout is 1: it must be 2 to 512"},
		{name: "fanout too large", args: []string{"--index-fanout", "513"}, wantErr: "--index-fanout is 513: it must be 2 to 512"},
		{name: "fanout negative", args: []string{"--index-fanout", "-2"}, wantErr: "--index-fanout is -2: it must be 2 to 512"},
		{name: "events too few", args: []string{"--max-events", "29"}, wantErr: "--max-events is 29: it must be 30 to 50000"},
		{name: "events too many", args: []string{"--max-events", "50001"}, wantErr: "--max-events is 50001: it must be 30 to 50000"},
		{name: "bytes too few", args: []string{"--max-history-bytes", "1048576"}, wantErr: "--max-history-bytes is 1048576: it must be 2097152 to 50331648"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f historyFlags
			cmd := &cobra.Command{}
			f.add(cmd)
			require.NoError(t, cmd.ParseFlags(tt.args))
			w, b, err := f.options(cmd)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.window, w)
			assert.Equal(t, tt.budget, b)
			if w != nil {
				require.NoError(t, w.Validate(), "what the flags allow, the chat takes")
			}
		})
	}
}

// Every history flag's help names its range, and shows the chat's default.
func TestHistoryFlagsHelp(t *testing.T) {
	var f historyFlags
	cmd := &cobra.Command{}
	f.add(cmd)
	for name, want := range map[string][]string{
		"window-messages":   {"at least 8", "256"},
		"page-messages":     {"4 to 256", "256"},
		"index-fanout":      {"2 to 512", "512"},
		"max-events":        {"30 to 50000", "4000"},
		"max-history-bytes": {"2 MiB", "48 MiB", "4194304"},
	} {
		fl := cmd.Flags().Lookup(name)
		require.NotNil(t, fl, name)
		assert.Contains(t, fl.Usage, want[0], name)
		assert.Equal(t, want[len(want)-1], fl.DefValue, name)
	}
}
