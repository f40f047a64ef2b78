package activities_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// summarize runs the Summarize activity with a summarizer agent whose offline script
// answers reply.
func summarize(t *testing.T, reply string) wire.SummarizeResult {
	t.Helper()
	acts := scripted(t, "summarizer", "Summarizer", offline.Reply{Text: reply})
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(acts.Summarize)
	v, err := env.ExecuteActivity(acts.Summarize, wire.SummarizeInput{Agent: "summarizer",
		History: wire.InvokeInput{ChatID: "c", AgentID: "summarizer", TurnID: "m3", History: seed}})
	require.NoError(t, err)
	var res wire.SummarizeResult
	require.NoError(t, v.Get(&res))
	return res
}

// A summary is channel state, carried whole by every continue-as-new and document: one
// over SummaryLimit is cut to it, at a character boundary, and says so; one at the limit
// is kept whole.
func TestSummaryIsBoundedBySummaryLimit(t *testing.T) {
	prefix := "[offline] summarizer: "                            // what the offline model puts before a scripted text
	at := strings.Repeat("é<", (wire.SummaryLimit-len(prefix))/8) // é: 2 bytes; <: six encoded
	for wire.TextBytes(prefix+at+"x") <= wire.SummaryLimit {
		at += "x"
	}
	got := summarize(t, at)
	require.Equal(t, wire.SummaryLimit, wire.TextBytes(got.Summary), "at the limit: whole")
	assert.NotContains(t, got.Summary, wire.SummaryCutMark)

	got = summarize(t, at+"é")
	assert.LessOrEqual(t, wire.TextBytes(got.Summary), wire.SummaryLimit, "one character over: cut")
	assert.True(t, strings.HasSuffix(got.Summary, wire.SummaryCutMark), "the cut says so")
	assert.True(t, strings.HasPrefix(prefix+at, strings.TrimSuffix(got.Summary, wire.SummaryCutMark)), "a prefix of the summary, cut between characters")
}
