package cli_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
)

// starter list prints the chats as a table (id, status, agents, turns, last
// activity), filtered and a page at a time, the page token going on; --json prints the
// page; a namespace without the search attributes gets a note that says how to add
// them.
func TestListPrintsChatsAPageAtATime(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	require.NoError(t, agentchat.RegisterSearchAttributes(t.Context(), h.Temporal, h.Namespace))
	a, b := testenv.ChatID(t)+"-a", testenv.ChatID(t)+"-b"
	ok(t, h, "start", "--chat", a, "--agents", "helper")
	ok(t, h, "send", "--chat", a, "Hello")
	ok(t, h, "start", "--chat", b, "--agents", "writer,reviewer")

	row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(a) + ` +running +helper +1 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`)
	var r result
	require.Eventually(t, func() bool {
		r = ok(t, h, "list", "--agent", "helper", "--status", "running")
		return row.MatchString(r.out)
	}, 20*time.Second, 200*time.Millisecond, "visibility shows the turn")
	assert.Regexp(t, `^CHAT +STATUS +AGENTS +TURNS +LAST ACTIVITY\n`, r.out)
	assert.Len(t, r.lines(), 2, "the header and the one helper chat: %s", r.out)

	var page agentchat.ListResult
	require.Eventually(t, func() bool {
		page = decode[agentchat.ListResult](t, ok(t, h, "list", "--json"))
		return len(page.Chats) == 2
	}, 20*time.Second, 200*time.Millisecond)
	assert.False(t, page.Unindexed)

	// The "more" line is the command that lists the next page, with this one's flags,
	// and comes only when a next page holds chats: two chats, pages of one.
	first := ok(t, h, "list", "--limit", "1", "--status", "running")
	require.Len(t, first.lines(), 3, first.out)
	m := regexp.MustCompile(`^\(more: go run \./starter (?:.* )?list --limit 1 --status running --page-token (\S+)\)$`).FindStringSubmatch(first.lines()[2])
	require.NotNil(t, m, first.out)
	second := ok(t, h, "list", "--limit", "1", "--status", "running", "--page-token", m[1])
	require.Len(t, second.lines(), 2, "the last page has no more line: %s", second.out)
	firstID, secondID := strings.Fields(first.lines()[1])[0], strings.Fields(second.lines()[1])[0]
	assert.ElementsMatch(t, []string{a, b}, []string{firstID, secondID}, "each page its own chat")
	both := ok(t, h, "list", "--limit", "2")
	assert.Len(t, both.lines(), 3, "a page that holds every chat has no more line: %s", both.out)

	assert.Contains(t, fails(t, h, "list", "--status", "sleeping"), `unknown status "sleeping"`)
	assert.Contains(t, fails(t, h, "list", "--limit", "0"), "--limit")
	assert.Contains(t, fails(t, h, "list", "--page-token", "!!"), "--page-token")
}

func TestListWithoutSearchAttributesSaysHowToAddThem(t *testing.T) {
	ns := "agentchat-list-bare"
	h := testenv.New(t, testenv.Options{Namespace: ns})
	id := testenv.ChatID(t)
	ok(t, h, "--namespace", ns, "start", "--chat", id, "--agents", "helper")
	var r result
	require.Eventually(t, func() bool {
		r = starter(t, h, "", "--namespace", ns, "list")
		return r.code == 0 && strings.Contains(r.out, id)
	}, 20*time.Second, 200*time.Millisecond)
	assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(id)+` +running +- +- +\d{4}-`, r.out)
	assert.Contains(t, r.err, "note: agents and turns are not indexed in namespace "+ns)
	assert.Contains(t, r.err, "temporal operator search-attribute create --namespace "+ns)
	line := fails(t, h, "--namespace", ns, "list", "--agent", "helper")
	assert.Contains(t, line, "a filter by agent needs the chats' search attributes")
}

// An empty list says where it looked (task queue and namespace) and how to look in
// another task queue: chats started with --task-queue Q are listed there.
func TestAnEmptyListSaysWhereItLooked(t *testing.T) {
	tq := testenv.TaskQueue(t)
	r := execute(t, "", "--address", testenv.Address(t), "--task-queue", tq, "list")
	require.Equal(t, 0, r.code, "%v", r)
	assert.Equal(t, "no chats\n", r.out)
	assert.Contains(t, r.err, `task queue "`+tq+`" of namespace "default"`)
	assert.Contains(t, r.err, "--task-queue Q")
}
