package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// Metadata keys agentchat sets on Assistants objects: wire names, which later attempts
// and later versions read back from the service.
const (
	// MetaMessageID marks a thread message with the primary messageId it carries: the
	// messages agentchat adds, and a run's reply once read.
	MetaMessageID = "agentchat_message_id"
	// MetaReplyID marks a run with the messageId its reply will have, so that a retried
	// call finds the run an earlier attempt made instead of making another.
	MetaReplyID = "agentchat_reply_id"
	// MetaAgentID marks the assistants and runs agentchat makes with the agent id.
	MetaAgentID = "agentchat_agent_id"
	// MetaChatID marks the threads agentchat makes with the chat id.
	MetaChatID = "agentchat_chat_id"
)

// Run polling: the first poll after runPollFirst, each next one half as long again as
// the one before, at most runPollMax apart.
const (
	runPollFirst = 100 * time.Millisecond
	runPollMax   = 2 * time.Second
)

// threadScanLimit bounds how many of a thread's newest messages a call reads to find
// the ones an earlier attempt already added (100 a page).
const threadScanLimit = 1000

// invokeAssistant runs one reply of an assistant agent (OpenAIAssistantAgent, seed
// ADR): the service keeps the conversation in an Assistants thread, named by the
// channel state (wire.AssistantThreadState) with the last primary message it holds.
//
//  1. The assistant is the agent's assistantId, or one the worker makes per agent and
//     endpoint on first use (see assistantFor).
//  2. A new channel gets a new thread.
//  3. A run an earlier attempt made for this reply (run metadata agentchat_reply_id =
//     in.ReplyID) is resumed if still going, or its answer taken if it completed, so a
//     retry never makes a second reply. Another reply's run still active on the thread
//     (an abandoned attempt) is cancelled first.
//  4. Otherwise the messages given (after syncedThrough, if history holds it) are added
//     to the thread, each with metadata {"agentchat_message_id": id}, skipping those an
//     earlier attempt added (found among the thread's newest messages), so none is
//     added twice. See threadMessage for roles and text.
//  5. A run is made (instructions = the agent's instructions, overriding the
//     assistant's; model = the agent's model) and polled, heartbeating, until it ends.
//  6. The reply is the text of the run's assistant messages, which are then marked with
//     in.ReplyID. The new state names the thread and in.ReplyID as the watermark.
//
// A run that requires action (function tools on the assistant) is cancelled: this
// kind does not submit tool outputs. Errors: InvalidInput for a malformed state or a
// missing replyId; ServiceThreadLost (not retryable, naming it) for a thread of the
// state that the service does not know (404), on which the workflow sends the primary
// history again to a new thread; other provider errors as providerError, prefixed with
// the thread; a failed run by its last_error
// code (serviceFailure: rate_limit_exceeded and server_error are retried); an expired
// or cancelled run is retried.
func (m *models) invokeAssistant(ctx context.Context, def agents.Definition, in wire.InvokeInput,
	history []chat.Message) (wire.InvokeResult, error) {
	var st wire.AssistantThreadState
	if err := checkServiceInput(def, in, &st); err != nil {
		return wire.InvokeResult{}, err
	}
	call := &callInfo{agentID: def.ID, chatID: in.ChatID}
	ctx = withCall(ctx, call)
	c := m.endpoints[def.Endpoint]
	prog := startProgress(ctx)
	defer prog.stop()
	fail := func(err error, where string) error { return serviceError(ctx, err, call.retryAfter, where) }

	assistantID, err := m.assistantFor(ctx, c, def)
	if err != nil {
		return wire.InvokeResult{}, fail(err, fmt.Sprintf("%s: create the assistant of agent %q", wire.ChannelAssistantThread, def.ID))
	}
	threadID, fresh := st.ThreadID, false
	if threadID == "" {
		threadID = prog.earlierThread()
	}
	if threadID == "" {
		th, err := c.CreateThread(ctx, openai.ThreadRequest{Metadata: map[string]any{MetaChatID: in.ChatID}})
		if err != nil {
			return wire.InvokeResult{}, fail(err, wire.ChannelAssistantThread+": create a thread")
		}
		threadID, fresh = th.ID, true
	}
	prog.setThread(threadID)
	where := fmt.Sprintf("%s: thread %q", wire.ChannelAssistantThread, threadID)

	var run *openai.Run
	if !fresh {
		if run, err = priorRun(ctx, c, threadID, in.ReplyID, prog); err != nil {
			if notFound(err) && threadID == st.ThreadID {
				return wire.InvokeResult{}, threadLost(where, "thread", err)
			}
			return wire.InvokeResult{}, fail(err, where)
		}
	}
	if run == nil {
		if err := addMessages(ctx, c, threadID, def.ID, unsynced(history, st.SyncedThrough), !fresh, prog); err != nil {
			return wire.InvokeResult{}, fail(err, where)
		}
		r, err := c.CreateRun(ctx, threadID, openai.RunRequest{AssistantID: assistantID, Model: def.Model,
			Instructions: def.Instructions, Metadata: map[string]any{MetaReplyID: in.ReplyID, MetaAgentID: def.ID}})
		if err != nil {
			if notFound(err) && def.AssistantID == "" {
				// The assistant this worker made is gone: make a new one on the retry.
				madeAssistants.forget(c, def.ID)
				return wire.InvokeResult{}, temporal.NewApplicationError(fmt.Sprintf(
					"%s: assistant %q of agent %q is gone (%v); a new one is made on the retry", where, assistantID, def.ID, err),
					wire.ErrTypeModelUnavailable)
			}
			return wire.InvokeResult{}, fail(err, where)
		}
		run = &r
	}
	done, err := waitRun(ctx, c, *run, prog)
	if err != nil {
		return wire.InvokeResult{}, fail(err, fmt.Sprintf("%s: run %q", where, run.ID))
	}
	if err := runOutcome(ctx, c, done, where); err != nil {
		return wire.InvokeResult{}, err
	}
	text, err := runReply(ctx, c, done, in.ReplyID)
	if err != nil {
		return wire.InvokeResult{}, fail(err, where)
	}
	state, err := json.Marshal(wire.AssistantThreadState{ThreadID: threadID, SyncedThrough: in.ReplyID,
		LostThreadID: st.LostThreadID})
	if err != nil {
		return wire.InvokeResult{}, err
	}
	return wire.InvokeResult{Contents: replyContents(text, nil), Model: done.Model, ChannelState: state,
		Usage: chatUsage(done.Model, done.Usage)}, nil
}

// threadMessage is how a primary message goes into an Assistants thread, whose
// messages are user or assistant text (metadata carries its messageId):
//   - user and system messages: role user, their text (images as "[image: <uri>]";
//     inline image data is left out);
//   - assistant messages: role assistant, their text, another agent's prefixed with
//     "<AuthorName>: " as in responsesInput, then a line "[function call <callId>:
//     <name>(<arguments>)]" per functionCall content;
//   - tool messages: role user, a line "[function result <callId>: <result>]" per
//     functionResult (results come from outside the model, as user input does).
//
// ok is false when nothing of m can be written (it is then left out).
func threadMessage(agentID string, m chat.Message) (req openai.MessageRequest, ok bool) {
	var lines []string
	role := openai.ChatMessageRoleUser
	switch m.Role {
	case chat.RoleAssistant:
		role = openai.ChatMessageRoleAssistant
		if text := attributed(agentID, m); text != "" {
			lines = append(lines, text)
		}
		for _, c := range m.FunctionCalls() {
			lines = append(lines, fmt.Sprintf("[function call %s: %s(%s)]", c.CallID, c.Name, c.Arguments))
		}
	case chat.RoleTool:
		for _, c := range m.Contents {
			if c.Type == chat.ContentFunctionResult {
				lines = append(lines, fmt.Sprintf("[function result %s: %s]", c.CallID, toolResultText(c)))
			}
		}
	default:
		for _, c := range m.Contents {
			switch {
			case c.Type == chat.ContentText && c.Text != "":
				lines = append(lines, c.Text)
			case c.Type == chat.ContentImage && c.URI != "":
				lines = append(lines, "[image: "+c.URI+"]")
			}
		}
	}
	text := strings.Join(lines, "\n")
	if strings.TrimSpace(text) == "" {
		return openai.MessageRequest{}, false
	}
	return openai.MessageRequest{Role: role, Content: text, Metadata: map[string]any{MetaMessageID: m.MessageID}}, true
}

// addMessages adds msgs to the thread in order. With dedupe, it first reads the
// thread's newest messages and skips those already there (metadata
// agentchat_message_id), as an earlier attempt of the same call may have added them.
func addMessages(ctx context.Context, c *openai.Client, threadID, agentID string, msgs []chat.Message, dedupe bool,
	prog *progress) error {
	var present map[string]bool
	if dedupe && len(msgs) > 0 {
		want := make(map[string]bool, len(msgs))
		for _, m := range msgs {
			want[m.MessageID] = true
		}
		var err error
		if present, err = presentMessages(ctx, c, threadID, want); err != nil {
			return err
		}
	}
	for _, m := range msgs {
		req, ok := threadMessage(agentID, m)
		if !ok || present[m.MessageID] {
			continue
		}
		if _, err := c.CreateMessage(ctx, threadID, req); err != nil {
			return err
		}
		prog.beat()
	}
	return nil
}

// presentMessages reads the thread's messages newest first and returns which of the
// wanted ids are there. It stops at the first message marked with an id that is not
// wanted (everything older was synced before), when every wanted id is found, or after
// threadScanLimit messages.
func presentMessages(ctx context.Context, c *openai.Client, threadID string, want map[string]bool) (map[string]bool, error) {
	present := map[string]bool{}
	limit, order := 100, "desc"
	var after *string
	for read := 0; read < threadScanLimit; {
		page, err := c.ListMessage(ctx, threadID, &limit, &order, after, nil, nil)
		if err != nil {
			return nil, err
		}
		for _, m := range page.Messages {
			id, _ := m.Metadata[MetaMessageID].(string)
			switch {
			case id == "":
				continue
			case !want[id]:
				return present, nil
			}
			present[id] = true
			if len(present) == len(want) {
				return present, nil
			}
		}
		read += len(page.Messages)
		if !page.HasMore || len(page.Messages) == 0 {
			break
		}
		after = &page.Messages[len(page.Messages)-1].ID
	}
	return present, nil
}

// priorRun looks at the thread's newest runs for one an earlier attempt made for
// replyID: still going, or completed (or incomplete), it is returned to be waited for
// or read. Another reply's run still active is cancelled and waited for, since a
// thread takes no message while a run is active. nil: a new run is needed.
func priorRun(ctx context.Context, c *openai.Client, threadID, replyID string, prog *progress) (*openai.Run, error) {
	limit, order := 10, "desc"
	runs, err := c.ListRuns(ctx, threadID, openai.Pagination{Limit: &limit, Order: &order})
	if err != nil {
		return nil, err
	}
	for _, r := range runs.Runs {
		ours := r.Metadata[MetaReplyID] == replyID
		switch {
		case ours && (activeRun(r.Status) || r.Status == openai.RunStatusCompleted || r.Status == openai.RunStatusIncomplete):
			return &r, nil
		case ours:
			return nil, nil // it failed or expired: make another
		case activeRun(r.Status):
			cancelled, err := c.CancelRun(ctx, threadID, r.ID)
			if err != nil {
				return nil, err
			}
			if _, err := waitRun(ctx, c, cancelled, prog); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

// activeRun reports whether a run with status st has not ended.
func activeRun(st openai.RunStatus) bool {
	switch st {
	case openai.RunStatusQueued, openai.RunStatusInProgress, openai.RunStatusCancelling, openai.RunStatusRequiresAction:
		return true
	}
	return false
}

// waitRun polls run until it ends or requires action, heartbeating on every poll.
func waitRun(ctx context.Context, c *openai.Client, run openai.Run, prog *progress) (openai.Run, error) {
	wait := runPollFirst
	for activeRun(run.Status) && run.Status != openai.RunStatusRequiresAction {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return run, ctx.Err()
		case <-t.C:
		}
		wait = min(wait*3/2, runPollMax)
		r, err := c.RetrieveRun(ctx, run.ThreadID, run.ID)
		if err != nil {
			return run, err
		}
		run = r
		prog.beat()
	}
	return run, nil
}

// runOutcome is nil for a run that completed (or is incomplete, which may still hold a
// partial answer), else the error its status calls for.
func runOutcome(ctx context.Context, c *openai.Client, run openai.Run, where string) error {
	where = fmt.Sprintf("%s: run %q", where, run.ID)
	switch run.Status {
	case openai.RunStatusCompleted, openai.RunStatusIncomplete:
		return nil
	case openai.RunStatusFailed:
		code, msg := "", "no error given"
		if run.LastError != nil {
			code, msg = string(run.LastError.Code), run.LastError.Message
		}
		return serviceFailure(where, code, msg)
	case openai.RunStatusRequiresAction:
		_, _ = c.CancelRun(ctx, run.ThreadID, run.ID) // best effort: it would expire anyway
		return temporal.NewNonRetryableApplicationError(where+" requires action (submit_tool_outputs): kind "+
			string(wire.KindAssistant)+" does not run the assistant's own function tools; remove them from the assistant",
			wire.ErrTypeModelRejected, nil)
	}
	return temporal.NewApplicationError(fmt.Sprintf("%s ended %s", where, run.Status), wire.ErrTypeModelUnavailable)
}

// runReply is the text of run's assistant messages, oldest first, joined by a blank
// line. Each is then marked with replyID (best effort: the mark only shortens later
// scans of the thread).
func runReply(ctx context.Context, c *openai.Client, run openai.Run, replyID string) (string, error) {
	limit, order := 100, "asc"
	list, err := c.ListMessage(ctx, run.ThreadID, &limit, &order, nil, nil, &run.ID)
	if err != nil {
		return "", err
	}
	var texts []string
	for _, m := range list.Messages {
		if m.Role != openai.ChatMessageRoleAssistant {
			continue
		}
		for _, part := range m.Content {
			if part.Text != nil && part.Text.Value != "" {
				texts = append(texts, part.Text.Value)
			}
		}
		if id, _ := m.Metadata[MetaMessageID].(string); id != replyID {
			if _, err := c.ModifyMessage(ctx, run.ThreadID, m.ID, map[string]string{MetaMessageID: replyID}); err != nil {
				activity.GetLogger(ctx).Warn("could not mark the reply in the thread", "thread", run.ThreadID,
					"message", m.ID, "error", err)
			}
		}
	}
	return strings.Join(texts, "\n\n"), nil
}

// assistantFor returns the assistant the agent's runs use: its assistantId, or the one
// this process made for the agent on this endpoint, made now on first use with the
// agent's name, model and instructions (runs override the model and instructions, so a
// config change needs no new assistant).
func (m *models) assistantFor(ctx context.Context, c *openai.Client, def agents.Definition) (string, error) {
	if def.AssistantID != "" {
		return def.AssistantID, nil
	}
	e := madeAssistants.entry(c, def.ID)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.id != "" {
		return e.id, nil
	}
	name, instructions := def.Name, def.Instructions
	asst, err := c.CreateAssistant(ctx, openai.AssistantRequest{Model: def.Model, Name: &name,
		Instructions: &instructions, Metadata: map[string]any{MetaAgentID: def.ID}})
	if err != nil {
		return "", err
	}
	e.id = asst.ID
	return e.id, nil
}

// assistantCache remembers the assistants this process made, by model client (one per
// Activities and endpoint) and agent id.
type assistantCache struct {
	mu      sync.Mutex
	entries map[assistantKey]*assistantEntry
}

type assistantKey struct {
	client *openai.Client
	agent  string
}

// assistantEntry is one cached assistant; its mutex makes concurrent first calls of an
// agent make one assistant, not several.
type assistantEntry struct {
	mu sync.Mutex
	id string
}

// madeAssistants is the process's assistant cache. It is kept outside Activities, keyed
// by the endpoint's client, so that it needs nothing from New.
var madeAssistants = &assistantCache{entries: map[assistantKey]*assistantEntry{}}

func (ac *assistantCache) entry(c *openai.Client, agent string) *assistantEntry {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	k := assistantKey{c, agent}
	e, ok := ac.entries[k]
	if !ok {
		e = &assistantEntry{}
		ac.entries[k] = e
	}
	return e
}

func (ac *assistantCache) forget(c *openai.Client, agent string) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	delete(ac.entries, assistantKey{c, agent})
}

// progress heartbeats an assistant call with its thread id as the heartbeat details,
// every third of the heartbeat timeout and on every poll, so that an attempt after a
// worker crash reuses the thread a new channel's first attempt made instead of making
// another.
type progress struct {
	ctx  context.Context
	mu   sync.Mutex
	d    progressDetails
	stop func() // ends the heartbeats and waits for the last one, so none is sent after the activity returned
}

// progressDetails are the heartbeat details of an assistant call.
type progressDetails struct {
	ThreadID string `json:"threadId,omitempty"`
}

func startProgress(ctx context.Context) *progress {
	p := &progress{ctx: ctx}
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &p.d) // unreadable details: start afresh
	}
	p.stop = heartbeatEvery(ctx, p.beat)
	return p
}

// earlierThread is the thread an earlier attempt of this call made, or "".
func (p *progress) earlierThread() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.d.ThreadID
}

func (p *progress) setThread(id string) {
	p.mu.Lock()
	p.d.ThreadID = id
	p.mu.Unlock()
	p.beat()
}

func (p *progress) beat() {
	p.mu.Lock()
	d := p.d
	p.mu.Unlock()
	activity.RecordHeartbeat(p.ctx, d)
}
