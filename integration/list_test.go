package integration_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// listed returns the ids of the chats List gives for opts, every page, once visibility
// shows want (it lags a moment behind the chats).
func listed(t *testing.T, c *agentchat.Client, opts agentchat.ListOptions, want func([]agentchat.ChatSummary) bool) []agentchat.ChatSummary {
	t.Helper()
	var all []agentchat.ChatSummary
	require.Eventually(t, func() bool {
		all = nil
		o := opts
		for {
			res, err := c.List(context.Background(), o)
			require.NoError(t, err)
			all = append(all, res.Chats...)
			if res.NextPageToken == nil {
				break
			}
			o.PageToken = res.NextPageToken
		}
		return want(all)
	}, 20*time.Second, 200*time.Millisecond, "listed: %+v", &all)
	return all
}

func ids(cs []agentchat.ChatSummary) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ChatID
	}
	slices.Sort(out)
	return out
}

// List finds a task queue's chats through visibility with the search attributes the
// worker registers: status, agents, turns and last activity, filtered by status and
// agent, page by page; a turn adds one upsert to the chat's history.
func TestListChatsByStatusAndAgent(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	require.NoError(t, agentchat.RegisterSearchAttributes(t.Context(), h.Temporal, h.Namespace))
	base := testenv.ChatID(t)
	thread, group, gone := base+"-thread", base+"-group", base+"-gone"
	before := time.Now().Add(-time.Second)
	for id, agents := range map[string][]string{thread: {"helper"}, group: {"writer", "reviewer"}, gone: {"helper"}} {
		_, err := h.Client.Start(t.Context(), agentchat.StartOptions{ChatID: id, Participants: agents})
		require.NoError(t, err)
	}
	for _, text := range []string{"Hello", "Again"} {
		_, err := h.Client.Send(t.Context(), thread, agentchat.SendMessageInput{Text: text})
		require.NoError(t, err)
	}
	require.NoError(t, h.Temporal.TerminateWorkflow(t.Context(), gone, "", "test"))

	all := listed(t, h.Client, agentchat.ListOptions{}, func(cs []agentchat.ChatSummary) bool {
		seen := 0
		for _, c := range cs {
			if c.ChatID == thread && c.Turns == 2 || c.ChatID == gone && c.Status == "terminated" {
				seen++
			}
		}
		return seen == 2 && len(cs) == 3
	})
	byID := map[string]agentchat.ChatSummary{}
	for _, c := range all {
		byID[c.ChatID] = c
	}
	th := byID[thread]
	assert.True(t, th.Indexed)
	assert.Equal(t, wire.StatusRunning, th.Status)
	assert.Equal(t, []string{"helper"}, th.Agents)
	assert.True(t, th.LastActivity.After(before), "%v", th.LastActivity)
	assert.False(t, th.LastActivity.Before(th.StartTime), "the last turn came after the start")
	assert.Equal(t, h.TaskQueue, th.TaskQueue)
	assert.Equal(t, []string{"writer", "reviewer"}, byID[group].Agents)
	assert.Zero(t, byID[group].Turns)
	assert.Equal(t, "terminated", byID[gone].Status)

	helpers := listed(t, h.Client, agentchat.ListOptions{Agent: "helper", Status: wire.StatusRunning},
		func(cs []agentchat.ChatSummary) bool { return len(cs) == 1 })
	assert.Equal(t, []string{thread}, ids(helpers))
	writers := listed(t, h.Client, agentchat.ListOptions{Agent: "writer"}, func(cs []agentchat.ChatSummary) bool { return len(cs) == 1 })
	assert.Equal(t, []string{group}, ids(writers))
	ended := listed(t, h.Client, agentchat.ListOptions{Status: "terminated"}, func(cs []agentchat.ChatSummary) bool { return len(cs) == 1 })
	assert.Equal(t, []string{gone}, ids(ended))

	// A participant added joins the chat's agents at once, not at its next turn.
	_, err := h.Client.AddParticipants(t.Context(), group, "helper")
	require.NoError(t, err)
	helpers = listed(t, h.Client, agentchat.ListOptions{Agent: "helper"}, func(cs []agentchat.ChatSummary) bool { return len(cs) == 3 })
	assert.Equal(t, []string{gone, group, thread}, ids(helpers))

	// One chat a page: three pages, each chat once.
	first, err := h.Client.List(t.Context(), agentchat.ListOptions{PageSize: 1})
	require.NoError(t, err)
	require.Len(t, first.Chats, 1)
	require.NotNil(t, first.NextPageToken)
	paged := listed(t, h.Client, agentchat.ListOptions{PageSize: 1}, func(cs []agentchat.ChatSummary) bool { return len(cs) == 3 })
	assert.Equal(t, []string{gone, group, thread}, ids(paged))

	// Bad options: a clear error.
	for _, o := range []agentchat.ListOptions{{Status: "sleeping"}, {PageSize: -1}, {PageSize: agentchat.MaxListPageSize + 1}} {
		_, err := h.Client.List(t.Context(), o)
		assert.ErrorIs(t, err, agentchat.ErrInvalidOptions, "%+v", o)
	}

	// The thread's two turns added two upserts of the chat's attributes to its history,
	// and its start none (GetVersion's own upserts are not ours).
	upserts := 0
	iter := h.Temporal.GetWorkflowHistory(t.Context(), thread, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		fields := ev.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()
		if _, ours := fields[wire.SearchTurns]; ours {
			upserts++
		}
	}
	assert.Equal(t, 2, upserts, "one a turn")
}

// In a namespace without the search attributes, List shows what visibility has, says
// how to add them, and refuses the filters that need them.
func TestListWithoutSearchAttributes(t *testing.T) {
	h := testenv.New(t, testenv.Options{Namespace: "agentchat-list-bare"})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(t.Context(), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	_, err = h.Client.Send(t.Context(), id, agentchat.SendMessageInput{Text: "Hello"})
	require.NoError(t, err)

	cs := listed(t, h.Client, agentchat.ListOptions{Status: wire.StatusRunning}, func(cs []agentchat.ChatSummary) bool { return len(cs) == 1 })
	assert.Equal(t, id, cs[0].ChatID)
	assert.Equal(t, wire.StatusRunning, cs[0].Status)
	assert.False(t, cs[0].Indexed)
	assert.Empty(t, cs[0].Agents)
	res, err := h.Client.List(t.Context(), agentchat.ListOptions{})
	require.NoError(t, err)
	assert.True(t, res.Unindexed)
	assert.Contains(t, res.Hint, "temporal operator search-attribute create --namespace agentchat-list-bare")

	for _, o := range []agentchat.ListOptions{{Agent: "helper"}, {Status: wire.StatusMigrated}} {
		_, err = h.Client.List(t.Context(), o)
		require.Error(t, err)
		assert.True(t, errors.Is(err, agentchat.ErrInvalidOptions), "%v", err)
		assert.Contains(t, err.Error(), "temporal operator search-attribute create")
	}
}
