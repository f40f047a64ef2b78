package transfer

import (
	"context"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
)

// IsStub reports whether m is a stub: a message without contents, whose body a long
// chat keeps in its message store.
func IsStub(m chat.Message) bool { return m.Contents == nil }

// FillStubs returns msgs with every stub filled from st (the contents of the stored
// body; the stub keeps its author and time), with one Get. msgs is not modified; with
// no stubs it is returned as it is and st is not called. The store's error (e.g.
// msgstore.ErrNotFound, msgstore.ErrUnavailable) is returned as it is.
func FillStubs(ctx context.Context, st msgstore.Store, chatID string, msgs []chat.Message) ([]chat.Message, error) {
	var ids []string
	for _, m := range msgs {
		if IsStub(m) {
			ids = append(ids, m.MessageID)
		}
	}
	if len(ids) == 0 {
		return msgs, nil
	}
	bodies, err := st.Get(ctx, chatID, ids)
	if err != nil {
		return nil, err
	}
	out := append([]chat.Message(nil), msgs...)
	j := 0
	for i := range out {
		if IsStub(out[i]) {
			out[i].Contents = bodies[j].Contents
			j++
		}
	}
	return out, nil
}
