package workflows

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// Message ids are unique in a chat by construction. Two kinds of id enter a chat: the
// ones clients choose (user turns' messageIds, and every id of an imported document,
// which may look like anything) and the ones the chat makes ("<turn>/<n>" for a turn's
// replies and tool results). The rule that keeps them apart, whatever the order:
//
//   - a new user turn whose messageId is already an id of the chat's (a message in the
//     history, a queued turn, the reply in flight, or an id given up because the
//     message store keeps a body under it: RetiredIDs) is refused at the door (admit
//     and takeSignal, by idRefusal), naming the id and what holds it; a retry of the
//     turn's own messageId is not new;
//   - a made id that is taken the same way is skipped: "<turn>/<n>" with the next free n
//     (nextID).
//
// A messageId is also the key of the message's body in the message store, which never
// changes a body it holds: two messages with one id would leave one of them unable to
// move there.

// maxRetiredIDs bounds RetiredIDs; past it the oldest are dropped.
const maxRetiredIDs = 256

// nextID returns the id of the next message of turn t: "<turn messageId>/<n>", n
// counting the messages after the user's, or, when that id is taken (idHolder), the
// next n whose id is free.
func (s *chatState) nextID(ctx workflow.Context, t *turn) string {
	n := s.history.Len() - s.history.IndexOf(t.msg.MessageID)
	id := fmt.Sprintf("%s/%d", t.msg.MessageID, n)
	// An id the filter of paged ids may hold is skipped too, for the first 16 tries: a
	// filter that holds very many ids says "maybe" to nearly all.
	for first := n; s.idHolder(id, false) != "" || (n < first+16 && s.history.MayHavePaged(id)); {
		n++
		id = fmt.Sprintf("%s/%d", t.msg.MessageID, n)
	}
	return id
}

// idHolder describes what holds message id in the chat ("" when it is free): a message
// of the history, a queued turn, the reply in flight (with live: a model call of this
// turn that is made again, after its service thread was lost, keeps its id), or an id
// given up because the message store keeps a body under it (RetiredIDs).
func (s *chatState) idHolder(id string, live bool) string {
	if i := s.history.IndexOf(id); i < s.history.Len() {
		m, _ := s.history.At(i)
		return describeMessage(m, i)
	}
	if s.turnQueue.IsQueued(id) {
		return "a queued user turn"
	}
	if h := s.replyInFlight(id); live && h != "" {
		return h
	}
	if slices.Contains(s.RetiredIDs, id) {
		return "a message the chat gave up (a reply taken back, or refused by the message store), whose body the message store keeps"
	}
	return ""
}

// pagedTurn answers for new turn m whose messageId a paged message may hold (the
// filter of paged ids says so): a LookupIDs local activity asks the message store.
// Not there: nil, nil. A paged user turn with m's contents: m is a retry of it, and
// its first answer is returned, read from the pages (the ReadTurn local activity),
// marked Replayed. Another message there: InvalidMessage, naming its index. A store
// that does not answer refuses the turn retryably (StoreUnavailable): nothing is
// queued, and the client sends it again.
func (s *chatState) pagedTurn(ctx workflow.Context, m chat.Message) (*wire.TurnResult, error) {
	id := m.MessageID
	if !s.history.MayHavePaged(id) {
		return nil, nil
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: storeTimeout, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}})
	unavailable := func(err error) error {
		return temporal.NewApplicationError(fmt.Sprintf(
			"chat %q could not look for messageId %q among its older messages in the message store (%s); nothing was queued: retry",
			s.chatID, id, errorMessage(err)), wire.ErrTypeStoreUnavailable)
	}
	store := orDefault(s.Store, s.in.Store)
	var found wire.LookupIDsResult
	in := wire.LookupIDsInput{ChatID: s.chatID, Store: store, Lineage: s.history.lineage(), IDs: []string{id}}
	if err := workflow.ExecuteLocalActivity(lctx, wire.LookupIDsActivity, in).Get(ctx, &found); err != nil {
		return nil, unavailable(err)
	}
	at, ok := found.Found[id]
	if !ok {
		return nil, nil
	}
	taken := temporal.NewApplicationError(fmt.Sprintf(
		"messageId %q is taken in chat %q: it is the id of history[%d], one of its older messages kept in the message store's pages; message ids are unique in a chat: give this turn another messageId",
		id, s.chatID, at.Index), wire.ErrTypeInvalidMessage)
	if at.Role != chat.RoleUser {
		return nil, taken
	}
	var turn wire.ReadTurnResult
	// ReadTurn reads as few pages under these refs as the turn takes (a bounded number).
	read := wire.ReadTurnInput{ChatID: s.chatID, Store: store, User: at.Index, Pages: s.history.pagesFrom(int(at.Index))}
	if err := workflow.ExecuteLocalActivity(lctx, wire.ReadTurnActivity, read).Get(ctx, &turn); err != nil {
		return nil, unavailable(err)
	}
	if turn.User.MessageID != id || !sameContents(turn.User.Contents, m.Contents) {
		return nil, temporal.NewApplicationError(fmt.Sprintf(
			"messageId %q was already used for a different message (history[%d]); give each turn its own messageId", id, at.Index),
			wire.ErrTypeInvalidMessage)
	}
	replies := turn.Replies
	if !turn.Ended && int(at.Index)+1+len(replies) >= s.history.Base() { // the turn goes on in the window
		_, end := s.history.TurnAround(s.history.Base())
		replies = append(replies, s.history.Slice(s.history.Base(), end)...)
	}
	return &wire.TurnResult{MessageID: id, Messages: boundMessages(replies), Replayed: true}, nil
}

// describeMessage names history[i], m, for an error.
func describeMessage(m chat.Message, i int) string {
	switch {
	case m.Role == chat.RoleUser:
		return fmt.Sprintf("a user turn (history[%d])", i)
	case m.Role == chat.RoleAssistant && m.AgentID != "":
		return fmt.Sprintf("agent %q's reply (history[%d])", m.AgentID, i)
	case m.Role == chat.RoleTool && m.AgentID != "":
		return fmt.Sprintf("the tool results of agent %q (history[%d])", m.AgentID, i)
	}
	return fmt.Sprintf("a message with role %q (history[%d])", m.Role, i)
}

// idRefusal is the InvalidMessage error for new user turn m whose messageId the chat
// already holds for another message, or nil. The turn's own user message (a failed
// turn kept in the history) is not another message: stateRefusal answers for it.
func (s *chatState) idRefusal(m chat.Message) error {
	if held, ok := s.history.At(s.history.IndexOf(m.MessageID)); ok && held.Role == chat.RoleUser {
		return nil
	}
	holder := s.idHolder(m.MessageID, true)
	if holder == "" {
		return nil
	}
	return temporal.NewApplicationError(fmt.Sprintf(
		"messageId %q is taken in chat %q: it is the id of %s; message ids are unique in a chat (replies get \"<turn>/<n>\"): give this turn another messageId",
		m.MessageID, s.chatID, holder), wire.ErrTypeInvalidMessage)
}

// retireStored records the ids of msgs, messages being taken back from the history,
// whose bodies are in the message store (stubs; a user turn's is not: it may be sent
// again): the store keeps a
// body for good, so no other message may have that id (idHolder).
func (s *chatState) retireStored(msgs []chat.Message) {
	for _, m := range msgs {
		if m.Contents == nil && m.Role != chat.RoleUser {
			s.retireIDs(m.MessageID)
		}
	}
}

// retireIDs records ids as given up for good: the message store holds a body under
// each that no message of the chat has (idHolder).
func (s *chatState) retireIDs(ids ...string) {
	for _, id := range ids {
		if !slices.Contains(s.RetiredIDs, id) {
			s.RetiredIDs = append(s.RetiredIDs, id)
		}
	}
	if n := len(s.RetiredIDs); n > maxRetiredIDs {
		s.RetiredIDs = slices.Clone(s.RetiredIDs[n-maxRetiredIDs:])
	}
}
