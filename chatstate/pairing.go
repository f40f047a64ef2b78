package chatstate

import (
	"strconv"

	"github.com/agentchat/agentchat/chat"
)

// RepairError is the error of the functionResult that Decode inserts for a functionCall
// that has none (see the package comment).
const RepairError = "no result was recorded for this call (added on import)"

// RepairMessageID returns the id of the tool message Decode inserts to answer the call
// callID of the message callMessageID: "<callMessageId>/repair-<callId>".
func RepairMessageID(callMessageID, callID string) string {
	return callMessageID + "/repair-" + callID
}

// callRef is where a functionCall is in the history as read: history[i].contents[j].
type callRef struct{ i, j int }

func (r callRef) field() string { return member(contentPath("history", r.i, r.j), "callId") }

// openCall is a functionCall not answered yet.
type openCall struct {
	at     callRef
	msgID  string
	callID string
}

// pairing walks a history applying the tool-call pairing rule of chat-state-v1.md.
type pairing struct {
	history []chat.Message
	out     []chat.Message // the repaired history; nil while nothing was inserted
	open    []openCall
	calls   map[string]callRef // callId → its functionCall
	ids     map[string]bool    // message ids, made on the first repair
	repairs []string
}

// pairCalls checks that every functionCall of history is answered by a functionResult
// with the same callId before the next non-tool message. Calls still open at the end of
// the history are left as they are: the chat's turn is waiting for their results (a
// tool call awaiting a person's approval), and the importing chat answers them before
// any model sees them again. It returns history with a repair message inserted for each
// call without a result, and one line per repair; it refuses, with a *FieldError naming
// the callId, a functionResult that answers no earlier unanswered call and a callId used
// by two calls. history itself is never modified; it is returned as is when nothing was
// repaired.
func pairCalls(history []chat.Message) ([]chat.Message, []string, error) {
	p := pairing{history: history, calls: map[string]callRef{}}
	for i, m := range history {
		if m.Role != chat.RoleTool {
			if err := p.close(i); err != nil {
				return nil, nil, err
			}
		}
		for j, c := range m.Contents {
			if err := p.content(i, j, m, c); err != nil {
				return nil, nil, err
			}
		}
		if p.out != nil {
			p.out = append(p.out, m)
		}
	}
	if p.out == nil {
		return history, nil, nil
	}
	return p.out, p.repairs, nil
}

func (p *pairing) content(i, j int, m chat.Message, c chat.Content) error {
	at := callRef{i, j}
	switch c.Type {
	case chat.ContentFunctionCall:
		if first, dup := p.calls[c.CallID]; dup {
			return errCallIDTaken(at, first, c.CallID)
		}
		p.calls[c.CallID] = at
		p.open = append(p.open, openCall{at: at, msgID: m.MessageID, callID: c.CallID})
	case chat.ContentFunctionResult:
		for k, o := range p.open {
			if o.callID == c.CallID {
				p.open = append(p.open[:k], p.open[k+1:]...)
				return nil
			}
		}
		return errOrphanResult(at, c.CallID)
	}
	return nil
}

func errCallIDTaken(at, first callRef, callID string) error {
	return fieldErr(at.field(), "functionCall "+strconv.Quote(callID)+" has the callId of "+first.field()+"; callIds are unique")
}

func errOrphanResult(at callRef, callID string) error {
	return fieldErr(at.field(), "functionResult "+strconv.Quote(callID)+
		" answers no earlier unanswered functionCall; refused, since dropping it would lose data")
}

func errRepairTaken(o openCall, id string) error {
	return fieldErr(o.at.field(), "functionCall "+strconv.Quote(o.callID)+
		" has no functionResult and cannot be repaired: message id "+strconv.Quote(id)+" is taken")
}

// close answers every open call with a repair message, inserted before history[i]: that
// is right after the tool messages that followed the call, or right after the call's
// message when none did.
func (p *pairing) close(i int) error {
	if len(p.open) == 0 {
		return nil
	}
	if p.out == nil {
		p.out = make([]chat.Message, 0, len(p.history)+len(p.open)+8)
		p.out = append(p.out, p.history[:i]...)
		p.ids = make(map[string]bool, len(p.history))
		for _, m := range p.history {
			p.ids[m.MessageID] = true
		}
	}
	for _, o := range p.open {
		id := RepairMessageID(o.msgID, o.callID)
		if p.ids[id] {
			return errRepairTaken(o, id)
		}
		p.ids[id] = true
		p.out = append(p.out, repairMessage(o, id))
		p.repairs = append(p.repairs, o.at.field()+": functionCall "+strconv.Quote(o.callID)+
			" had no functionResult; inserted tool message "+strconv.Quote(id)+
			" with an error result as history["+strconv.Itoa(len(p.out)-1)+"]")
	}
	p.open = p.open[:0]
	return nil
}

// repairMessage is the tool message that answers o, with the id id.
func repairMessage(o openCall, id string) chat.Message {
	return chat.Message{
		MessageID: id,
		Role:      chat.RoleTool,
		Contents: []chat.Content{{
			Type: chat.ContentFunctionResult, CallID: o.callID, Error: RepairError,
		}},
	}
}

// repairCalls applies pairCalls to d's history and checks that the repaired document is
// still valid (a repair message's id could be a pending turn's).
func repairCalls(d Document) (Document, []string, error) {
	history, repairs, err := pairCalls(d.History)
	if err != nil || len(repairs) == 0 {
		return d, nil, err
	}
	d.History = history
	if err := d.Validate(); err != nil {
		return Document{}, nil, err
	}
	return d, repairs, nil
}
