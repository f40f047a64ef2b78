package workflows

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// The running total of the history's references equals HistoryStubBytes as the
// history grows, is cut back, regrows with other messages, and has a message's
// reference changed in place.
func TestStubTotalFollowsTheHistory(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.UTC)
	msg := func(id string, role chat.Role, created time.Time) chat.Message {
		return chat.Message{MessageID: id, Role: role, AgentID: "a<" + id, CreatedAt: created}
	}
	var st stubTotal
	var h []chat.Message
	check := func(step string) {
		t.Helper()
		if got, want := st.of(h), wire.HistoryStubBytes(h); got != want {
			t.Fatalf("%s: running total %d, HistoryStubBytes %d", step, got, want)
		}
	}
	for i := range 10 {
		h = append(h, msg(fmt.Sprint("m", i), chat.RoleUser, at))
		check("grow")
	}
	st.cut(h, 4)
	h = h[:4]
	check("cut")
	h = append(h, msg("much-longer-id-5", chat.RoleTool, time.Time{}), msg("m6", chat.RoleAssistant, at.Add(time.Second)))
	check("regrow")
	st.cut(h, 4)
	h[4].CreatedAt = at
	check("changed in place")
	h = h[:2] // cut back without cut: counted again
	check("cut without cut")
}

// Measuring a message allocates nothing (its time is formatted on the stack).
func TestMessageBytesDoesNotAllocate(t *testing.T) {
	m := chat.Message{MessageID: "m1", Role: chat.RoleUser, AuthorName: "Alice", AgentID: "helper",
		CreatedAt: time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))}
	if n := testing.AllocsPerRun(100, func() { _ = wire.StubBytes(m) }); n != 0 {
		t.Fatalf("StubBytes allocates %v times", n)
	}
}
