package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentchat/agentchat/wire"
)

// Bounds of the history flags that the wire types leave open. A run's budget below
// minMaxEvents or minMaxHistoryBytes could be spent by a new run's first events and
// its carried state (up to wire.CarryLimit) alone, so the chat would hand over again
// at once; maxMaxEvents and maxMaxHistoryBytes stay under Temporal's hard limits of a
// run's history (51,200 events, 50 MB).
const (
	minMaxEvents       = 30
	maxMaxEvents       = 50_000
	minMaxHistoryBytes = 2 << 20
	maxMaxHistoryBytes = 48 << 20
)

// historyFlags are the flags of a new chat's paged history and run budget
// (wire.HistoryWindow, wire.HistoryBudget): start and import take them.
type historyFlags struct {
	window, page, fanout int
	maxEvents, maxBytes  int
}

// add adds the flags to cmd, their defaults those of a chat started without them.
func (f *historyFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.window, "window-messages", wire.WindowMessages,
		"messages the workflow keeps at least (the window); older ones go to pages of the message store at each continue-as-new (at least 8)")
	fl.IntVar(&f.page, "page-messages", wire.PageMessages, fmt.Sprintf(
		"messages per page of the message store (4 to %d)", wire.PageMessages))
	fl.IntVar(&f.fanout, "index-fanout", wire.IndexFanout, fmt.Sprintf(
		"page references per index page: that many pages of one level go to one index page of the level above (2 to %d)", wire.IndexFanout))
	fl.IntVar(&f.maxEvents, "max-events", wire.DefaultMaxEvents, fmt.Sprintf(
		"events of one workflow run before the chat continues as new, which is when pages are written (%d to %d)", minMaxEvents, maxMaxEvents))
	fl.IntVar(&f.maxBytes, "max-history-bytes", wire.DefaultMaxHistoryBytes, fmt.Sprintf(
		"bytes of one workflow run's event history before the chat continues as new (%d = 2 MiB to %d = 48 MiB)", minMaxHistoryBytes, maxMaxHistoryBytes))
}

// options returns what the flags given on cmd set: the window (nil when no window
// flag was given, so the chat keeps the defaults) and the budget (zero fields for
// flags not given). A value out of range is an error naming the flag and the range.
func (f *historyFlags) options(cmd *cobra.Command) (*wire.HistoryWindow, wire.HistoryBudget, error) {
	var (
		w wire.HistoryWindow
		b wire.HistoryBudget
	)
	for _, r := range []struct {
		name     string
		value    int
		min, max int // max 0: no upper bound
		to       *int
	}{
		{"window-messages", f.window, 8, 0, &w.WindowMessages},
		{"page-messages", f.page, 4, wire.PageMessages, &w.PageMessages},
		{"index-fanout", f.fanout, 2, wire.IndexFanout, &w.IndexFanout},
		{"max-events", f.maxEvents, minMaxEvents, maxMaxEvents, &b.MaxEvents},
		{"max-history-bytes", f.maxBytes, minMaxHistoryBytes, maxMaxHistoryBytes, &b.MaxBytes},
	} {
		if !cmd.Flags().Changed(r.name) {
			continue
		}
		switch {
		case r.max == 0 && r.value < r.min:
			return nil, wire.HistoryBudget{}, fmt.Errorf("--%s is %d: it must be at least %d", r.name, r.value, r.min)
		case r.max > 0 && (r.value < r.min || r.value > r.max):
			return nil, wire.HistoryBudget{}, fmt.Errorf("--%s is %d: it must be %d to %d", r.name, r.value, r.min, r.max)
		}
		*r.to = r.value
	}
	if w == (wire.HistoryWindow{}) {
		return nil, b, nil
	}
	return &w, b, nil
}

// historyFlagsHelp is the help text of start and import on the history flags.
const historyFlagsHelp = `History window and run budget (--window-messages, --page-messages, --index-fanout,
--max-events, --max-history-bytes): a chat keeps its latest messages in the workflow
and writes older ones to pages of the worker's message store when it continues as
new, which it does once a run passes --max-events events (default 4,000: about 200
turns of one agent without tools) or --max-history-bytes. The defaults suit real
chats. To see pages written within a few turns (about 8 of one agent):
  starter start --chat paged --agents helper --window-messages 8 --page-messages 4 --max-events 60`
