package activities

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/telemetry"
	"github.com/agentchat/agentchat/wire"
)

// models makes the model calls: the agents' replies by kind, the strategies' asks
// (selection, termination, summaries) and their Go functions, and the participants'
// look-up. It owns the registry's use for calls, the agent kinds, a go-openai client
// and base URL per endpoint (Config.Models), the telemetry of the calls, the selection
// and termination functions (Config.Functions), and the cache of chat runs' histories
// (Config.Stores.CachedRuns), read through clients (the runs' History query) and
// stores (pages and stubs). It offers tools through tools and answers UnknownAgent
// through unknowns.
type models struct {
	registry  *agents.Registry
	kinds     map[wire.Kind]agentKind
	endpoints map[string]*openai.Client
	baseURLs  map[string]string
	telemetry *telemetry.Recorder
	selectors map[string]SelectFunc
	judges    map[string]JudgeFunc
	runs      *runCache
	clients   *clients
	stores    *stores
	tools     *tools
	unknowns  *unknowns
}

// ReplyInlineLimit is the largest reply, in encoded bytes, returned in the activity
// result; a larger one goes to the chat's message store (wire.ReplyInlineLimit,
// 1 MiB, half the 2 MiB payload limit).
const ReplyInlineLimit = wire.ReplyInlineLimit

// InvokeAgent implements Activities.InvokeAgent.
func (m *models) InvokeAgent(ctx context.Context, in wire.InvokeInput) (wire.InvokeResult, error) {
	def, err := m.agent(ctx, in.AgentID)
	if err != nil {
		return wire.InvokeResult{}, err
	}
	kind, err := m.kindOf(def)
	if err != nil {
		return wire.InvokeResult{}, err
	}
	history, err := m.historyFor(ctx, in)
	if err != nil {
		return wire.InvokeResult{}, err
	}
	pub := newPublisher(ctx, m.clients.selfClient(), in.ReplyID, m.registry.PublishInterval(def))
	res, err := m.tracedInvoke(ctx, def, in, history, func(ctx context.Context) (wire.InvokeResult, error) {
		res, err := kind.invoke(withPublisher(ctx, pub), def, in, history)
		return withUsage(res, m.registry.Config(), def, res.Usage), err
	})
	pub.close(ctx)
	if err != nil {
		return wire.InvokeResult{}, err
	}
	if len(res.Contents) == 0 {
		return wire.InvokeResult{}, temporal.NewApplicationError(
			fmt.Sprintf("agent %q: model %q returned an empty reply", def.ID, def.Model), wire.ErrTypeModelUnavailable)
	}
	size := wire.MessageBytes(chat.Message{Contents: res.Contents})
	if size > ReplyInlineLimit && slices.ContainsFunc(res.Contents, func(c chat.Content) bool { return c.Type == chat.ContentFunctionCall }) {
		// The workflow runs the calls it reads in the reply; a reference would hide them.
		return wire.InvokeResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"agent %q: model %q replied with tool calls of %d bytes, over the %d a reply with tool calls may take (ReplyInlineLimit)",
			def.ID, def.Model, size, ReplyInlineLimit), wire.ErrTypeModelRejected, nil)
	}
	if size > ReplyInlineLimit && in.ReplyID != "" {
		// Too large for a Temporal payload: the body goes to the message store and
		// the workflow keeps a reference.
		stop := heartbeatWhileWaiting(ctx) // a slow store is not a dead worker
		stored, err := m.stores.StoreMessages(ctx, wire.StoreMessagesInput{ChatID: in.ChatID, Store: in.Store,
			Messages: []chat.Message{{MessageID: in.ReplyID, Role: chat.RoleAssistant, AgentID: def.ID, Contents: res.Contents}}})
		stop()
		if err != nil {
			return wire.InvokeResult{}, err
		}
		res.Contents, res.Stored = nil, stored.Store
	}
	return res, nil
}

// agent returns the definition of agent id; one gone from the registry is UnknownAgent,
// not retried on this worker (the workflow tries the queue's other workers).
func (m *models) agent(ctx context.Context, id string) (agents.Definition, error) {
	def, ok := m.registry.Get(id)
	if !ok {
		return agents.Definition{}, m.unknowns.here(ctx, wire.KindAgent, []string{id}, m.registry.IDs(), fmt.Sprintf(
			"agent %q is not in this worker's registry, which has %s", id, strings.Join(m.registry.IDs(), ", ")))
	}
	return def, nil
}

// ResolveParticipants implements Activities.ResolveParticipants.
func (m *models) ResolveParticipants(ctx context.Context, in wire.ResolveInput) (wire.ResolveResult, error) {
	ps, err := m.registry.Resolve(in.AgentIDs)
	if err != nil {
		var unknown *agents.UnknownAgentsError
		if errors.As(err, &unknown) {
			return wire.ResolveResult{}, m.unknowns.here(ctx, wire.KindAgent, unknown.Unknown, m.registry.IDs(), err.Error())
		}
		return wire.ResolveResult{}, temporal.NewNonRetryableApplicationError(err.Error(), wire.ErrTypeInvalidInput, nil)
	}
	for i := range ps {
		d, _ := m.registry.Get(ps[i].ID)
		ps[i].Tools = append(ps[i].Tools, m.tools.mcpSpecs(d)...)
	}
	return wire.ResolveResult{Participants: ps}, nil
}

// invokeChatCompletion runs one reply of a chat_completion agent: one Chat Completions
// call, streamed when the endpoint streams, with tool_choice toolChoice when the
// request has tools (OpenAI refuses a tool_choice without tools); provider errors as
// providerError.
//
// The history sent is cut to the agent's context budget (withinBudget); when the
// provider still answers context_length_exceeded (its tokenizer counts more than the
// estimate), the call is made again with half the budget, while that leaves out more.
func (m *models) invokeChatCompletion(ctx context.Context, def agents.Definition, history []chat.Message,
	toolChoice string, chatTools []string) (wire.InvokeResult, error) {
	call := &callInfo{agentID: def.ID, chatID: chatIDOf(ctx), reply: true, author: OpenAIName(def.Name)}
	ctx = withCall(ctx, call)
	client := m.endpoints[def.Endpoint]
	streaming := m.registry.Endpoint(def).Streaming()
	tools := m.tools.offeredTools(def, chatTools)
	res, err := withinBudget(ctx, def, def.Instructions, history, func(sent []chat.Message) (wire.InvokeResult, error) {
		req := openai.ChatCompletionRequest{Model: def.Model, Messages: chatMessages(def.Instructions, sent), Tools: tools}
		if toolChoice != "" && len(req.Tools) > 0 {
			req.ToolChoice = toolChoice
		}
		if streaming {
			return completeStreaming(ctx, client, req)
		}
		return completeOnce(ctx, client, req)
	})
	if err != nil {
		return wire.InvokeResult{}, providerError(ctx, err, call.retryAfter)
	}
	return res, nil
}

// withinBudget calls send with history cut to def's context budget
// (Definition.ContextTokens, strategies.Budget), less what the instructions count. When
// send fails with the provider's context_length_exceeded (its tokenizer counted more
// than strategies.EstimateTokens), it is called again with half the budget, as long as
// that leaves out more messages; the last error is returned as send returned it (the
// go-openai error, for providerError). What was left out is logged, never lost: the
// chat's history is unchanged.
func withinBudget(ctx context.Context, def agents.Definition, instructions string, history []chat.Message,
	send func([]chat.Message) (wire.InvokeResult, error)) (wire.InvokeResult, error) {
	tokens := cmp.Or(def.ContextTokens, strategies.DefaultContextTokens) - strategies.EstimateTokens(len(instructions))
	tokens = max(tokens, 1)
	sent := strategies.Budget(history, tokens, wire.MessageBytes)
	for {
		if len(sent) < len(history) {
			activity.GetLogger(ctx).Debug("history cut to the agent's context budget", "agent", def.ID,
				"budgetTokens", tokens, "messages", len(history), "sent", len(sent))
		}
		res, err := send(sent)
		var apiErr *openai.APIError
		if err == nil || !errors.As(err, &apiErr) || apiErr.Code != "context_length_exceeded" {
			return res, err
		}
		tokens /= 2
		smaller := strategies.Budget(history, max(tokens, 1), wire.MessageBytes)
		if len(smaller) >= len(sent) {
			return res, err
		}
		sent = smaller
	}
}

// completeOnce makes a non-streaming call, heartbeating while it waits.
func completeOnce(ctx context.Context, c *openai.Client, req openai.ChatCompletionRequest) (wire.InvokeResult, error) {
	ctx, req, body, err := withEncodedBody(ctx, req)
	if err != nil {
		return wire.InvokeResult{}, err
	}
	stop := heartbeatWhileWaiting(ctx)
	defer stop()
	resp, err := c.CreateChatCompletion(ctx, req)
	if err != nil {
		return wire.InvokeResult{}, err
	}
	if err := body.check(); err != nil {
		return wire.InvokeResult{}, err
	}
	if len(resp.Choices) == 0 {
		return wire.InvokeResult{}, errors.New("response has no choices")
	}
	m := resp.Choices[0].Message
	noteFinish(ctx, string(resp.Choices[0].FinishReason))
	return wire.InvokeResult{
		Contents: replyContents(m.Content, m.ToolCalls), Model: resp.Model, Usage: chatUsage(resp.Model, resp.Usage),
	}, nil
}

// completeStreaming makes a streaming call, heartbeating on each chunk, and assembles
// the text and the tool calls (whose arguments arrive in fragments, by index).
//
// A stream silent for longer than the heartbeat timeout is cut here too: Temporal has
// already retried the call elsewhere, and an abandoned request would otherwise hold a
// connection (and spend tokens) until the start-to-close timeout.
func completeStreaming(ctx context.Context, c *openai.Client, req openai.ChatCompletionRequest) (wire.InvokeResult, error) {
	// The usage comes in a last chunk without choices, when asked for (OpenAI's
	// stream_options.include_usage).
	req.Stream, req.StreamOptions = true, &openai.StreamOptions{IncludeUsage: true}
	ctx, req, body, err := withEncodedBody(ctx, req)
	if err != nil {
		return wire.InvokeResult{}, err
	}
	hb := activity.GetInfo(ctx).HeartbeatTimeout
	ctx, idle := idleCancel(ctx, hb)
	defer idle.Stop()
	// Heartbeat on chunks, but no more than every third of the heartbeat timeout and
	// not before the first third has passed: a short answer costs no heartbeat round
	// trip, a long one still tells the server it is alive well within the timeout.
	beat := newBeat(hb / 3)
	pub := publisherOf(ctx)
	stream, err := c.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return wire.InvokeResult{}, err
	}
	defer stream.Close()
	if err := body.check(); err != nil {
		return wire.InvokeResult{}, err
	}
	var (
		chunks chunkDecoder
		text   strings.Builder
		calls  = map[int]*openai.ToolCall{}
		model  string
		usage  *chat.Usage
		n      int
	)
	for {
		raw, err := stream.RecvRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return wire.InvokeResult{}, err
		}
		var chunk openai.ChatCompletionStreamResponse
		if err := chunks.decode(raw, &chunk); err != nil {
			return wire.InvokeResult{}, err
		}
		n++
		idle.Reset(hb)
		if beat.due() {
			activity.RecordHeartbeat(ctx, n)
		}
		model = chunk.Model
		if chunk.Usage != nil {
			usage = chatUsage(chunk.Model, *chunk.Usage)
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		noteFinish(ctx, string(chunk.Choices[0].FinishReason))
		d := chunk.Choices[0].Delta
		text.WriteString(d.Content)
		pub.add(d.Content)
		for _, tc := range d.ToolCalls {
			mergeToolCall(calls, tc)
		}
	}
	ordered := make([]openai.ToolCall, 0, len(calls))
	for _, i := range sortedKeys(calls) {
		ordered = append(ordered, *calls[i])
	}
	return wire.InvokeResult{Contents: replyContents(text.String(), ordered), Model: model, Usage: usage}, nil
}

// chunkDecoder reads the chunks of one stream as decodeChunk does, the text chunks
// from a template once it has read one whole: a streamed reply is a chunk a word
// (or a token), and its chunks differ only in the text of their delta (the offline
// model writes them the same way, offline.textChunks). A chunk whose bytes are the
// template's before and after its content string is the template with that string
// as its text; any other chunk is read whole, and may become the template.
//
// The template is made only from a chunk that holds one choice with text and
// nothing else that changes (no tool call, function call, log probabilities or
// usage), one "content" member in any letter case (encoding/json matches names
// case-insensitively, and a later member wins), and no backslash outside that
// string (so no name is escaped); the text read back from its bytes must be what the
// whole read gave. TestChunkDecoderReadsAsDecodeChunk holds it to decodeChunk on
// seeded streams, damaged ones included.
type chunkDecoder struct {
	head, tail []byte // the template's bytes before and after its content string
	template   openai.ChatCompletionStreamResponse
}

// decode reads raw into chunk, as decodeChunk does.
func (d *chunkDecoder) decode(raw []byte, chunk *openai.ChatCompletionStreamResponse) error {
	if d.head != nil && len(raw) > len(d.head)+len(d.tail) && bytes.HasPrefix(raw, d.head) && bytes.HasSuffix(raw, d.tail) {
		var text string
		if mid := raw[len(d.head) : len(raw)-len(d.tail)]; mid[0] == '"' &&
			jsonv2.Unmarshal(mid, &text, jsonv1.DefaultOptionsV1()) == nil {
			*chunk = d.template
			choice := d.template.Choices[0]
			choice.Delta.Content = text
			chunk.Choices = []openai.ChatCompletionStreamChoice{choice}
			return nil
		}
	}
	if err := decodeChunk(raw, chunk); err != nil {
		return err
	}
	d.learn(raw, chunk)
	return nil
}

// learn makes c, read whole from raw, the template if it qualifies (chunkDecoder).
func (d *chunkDecoder) learn(raw []byte, c *openai.ChatCompletionStreamResponse) {
	if len(c.Choices) != 1 || c.Usage != nil {
		return
	}
	delta := c.Choices[0].Delta
	if delta.Content == "" || delta.ToolCalls != nil || delta.FunctionCall != nil || c.Choices[0].Logprobs != nil {
		return
	}
	const key = `"content"`
	lower := bytes.ToLower(raw) // ASCII case: no letter of "content" has another Unicode fold
	at := bytes.Index(lower, []byte(key))
	if at < 0 || bytes.Count(lower, []byte(key)) != 1 {
		return
	}
	i := skipSpace(raw, at+len(key))
	if i >= len(raw) || raw[i] != ':' {
		return
	}
	start := skipSpace(raw, i+1)
	end := stringEnd(raw, start)
	if end < 0 || bytes.IndexByte(raw[:start], '\\') >= 0 || bytes.IndexByte(raw[end:], '\\') >= 0 {
		return
	}
	var text string
	if jsonv2.Unmarshal(raw[start:end], &text, jsonv1.DefaultOptionsV1()) != nil || text != delta.Content {
		return
	}
	d.head, d.tail = bytes.Clone(raw[:start]), bytes.Clone(raw[end:])
	d.template = *c
	d.template.Choices = slices.Clone(c.Choices)
}

// skipSpace returns the index of the first byte of b from i on that is not JSON white
// space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the JSON string that starts at b[i], or -1
// when none starts there or it does not end.
func stringEnd(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// decodeChunk reads one event of a Chat Completions stream as go-openai's Recv does
// (RecvRaw, then encoding/json), but with encoding/json/v2 (the go-json-experiment
// mirror) and v1's options: the same values for the same bytes, and an error where
// encoding/json has one, in one pass instead of a scan and a decode. go-openai's
// decode of the chunks was about a third of a short turn's activity CPU (a reply
// streams a chunk a word).
func decodeChunk(raw []byte, chunk *openai.ChatCompletionStreamResponse) error {
	return jsonv2.Unmarshal(raw, chunk, jsonv1.DefaultOptionsV1())
}

func mergeToolCall(calls map[int]*openai.ToolCall, d openai.ToolCall) {
	i := 0
	if d.Index != nil {
		i = *d.Index
	}
	tc, ok := calls[i]
	if !ok {
		tc = &openai.ToolCall{Type: openai.ToolTypeFunction}
		calls[i] = tc
	}
	if d.ID != "" {
		tc.ID = d.ID
	}
	if d.Function.Name != "" {
		tc.Function.Name = d.Function.Name
	}
	tc.Function.Arguments += d.Function.Arguments
}

func sortedKeys(m map[int]*openai.ToolCall) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

// replyContents turns a reply's text and tool calls into contents, text first.
func replyContents(text string, calls []openai.ToolCall) []chat.Content {
	var out []chat.Content
	if strings.TrimSpace(text) != "" {
		out = append(out, chat.Text(text))
	}
	for _, tc := range calls {
		out = append(out, chat.Content{Type: chat.ContentFunctionCall, CallID: tc.ID,
			Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return out
}

// beat paces heartbeats: due reports true at most once per period, the first time one
// period after the start.
type beat struct {
	period time.Duration
	next   time.Time
}

func newBeat(period time.Duration) *beat { return &beat{period: period, next: time.Now().Add(period)} }

func (b *beat) due() bool {
	if b.period <= 0 || time.Now().Before(b.next) {
		return false
	}
	b.next = time.Now().Add(b.period)
	return true
}

// idleTimer cancels a context when it is not reset in time.
type idleTimer struct {
	t      *time.Timer
	cancel context.CancelCauseFunc
}

// idleCancel returns a context cancelled when d passes without a Reset (d <= 0: never)
// and, in any case, by Stop.
func idleCancel(ctx context.Context, d time.Duration) (context.Context, idleTimer) {
	ctx, cancel := context.WithCancelCause(ctx)
	i := idleTimer{cancel: cancel}
	if d > 0 {
		i.t = time.AfterFunc(d, func() {
			cancel(fmt.Errorf("the model sent nothing for %s (the heartbeat timeout)", d))
		})
	}
	return ctx, i
}

// Reset restarts the idle period.
func (i idleTimer) Reset(d time.Duration) {
	if i.t != nil && d > 0 {
		i.t.Reset(d)
	}
}

// Stop stops the timer and releases the context.
func (i idleTimer) Stop() {
	if i.t != nil {
		i.t.Stop()
	}
	i.cancel(nil)
}

// heartbeatWhileWaiting heartbeats every third of the heartbeat timeout until stopped,
// so that a worker that dies mid-call is noticed within that timeout. The heartbeats
// carry the details this attempt started with (see keepingDetails).
func heartbeatWhileWaiting(ctx context.Context) (stop func()) {
	return heartbeatEvery(ctx, keepingDetails(ctx))
}

// keepingDetails returns a heartbeat that carries the details this attempt started
// with (an earlier attempt's last, such as an assistant call's thread id), or none: a
// phase with no progress of its own to record must not erase them for the next attempt.
func keepingDetails(ctx context.Context) (beat func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	var d json.RawMessage
	if activity.HasHeartbeatDetails(ctx) && activity.GetHeartbeatDetails(ctx, &d) == nil {
		return func() { activity.RecordHeartbeat(ctx, d) }
	}
	return func() { activity.RecordHeartbeat(ctx) }
}

// heartbeatEvery calls beat every third of the activity's heartbeat timeout (never
// without one, nor outside an activity) until stop is called or ctx is done. stop
// waits for a beat in progress, so none comes after it; calling it again is a no-op.
func heartbeatEvery(ctx context.Context, beat func()) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {} // called directly, as a function
	}
	every := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				beat()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}

// chatIDOf is the id of the chat whose activity this is (the calling workflow's id).
func chatIDOf(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return ""
	}
	return activity.GetInfo(ctx).WorkflowExecution.ID
}
