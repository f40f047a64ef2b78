package offline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	openai "github.com/sashabaranov/go-openai"
)

// maxBodyBytes is the largest request body the server reads, in bytes; larger ones get 413.
const maxBodyBytes = 8 << 20

// answer is what one chat completion says, before it is encoded whole or streamed.
type answer struct {
	id        string // "chatcmpl-offline-<n>"
	created   int64  // Unix seconds
	model     string
	content   string
	toolCalls []openai.ToolCall // Index nil; streaming sets it
	finish    openai.FinishReason
	usage     openai.Usage
}

// chunkDelay is the pause between the stream events of agent's reply: the reply's own,
// else the agent's, else the server's.
func (s *Server) chunkDelay(agent string, reply Reply) time.Duration {
	if reply.ChunkDelay > 0 {
		return time.Duration(reply.ChunkDelay)
	}
	if d, ok := s.opts.ChunkDelays[agent]; ok {
		return d
	}
	return s.opts.ChunkDelay
}

// chatCompletions answers POST /v1/chat/completions: it counts the request, decodes
// and checks the body (400/413 at once when it is malformed or breaks a rule of
// Validate, recorded in Violations), takes the agent's scripted reply for this
// conversation (scriptPosition), waits Options.Latency plus the reply's Delay (503 if
// the request or server is cancelled meanwhile), then answers the scripted error, or
// the reply whole or as a stream.
func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	agent := agentOf(r)
	seq := s.ledger.count(agent)
	log := s.log.With("agent", agent, "request", seq)

	req, status, err := decodeRequest(w, r)
	if err != nil {
		s.refuse(w, r, &Violation{Status: status, Message: err.Error()})
		return
	}
	if v := validateChat(req); v != nil {
		s.refuse(w, r, v)
		return
	}
	s.ledger.record(agent, req)
	reply := s.ledger.reply(agent, chatOf(r), scriptPosition(r, req.Messages))

	if !s.awaitReply(w, r, reply, log) {
		return
	}
	ans := buildAnswer(agent, reply, req, seq, func() string { return conversationKey(req.Messages) })
	log.Debug("offline: chat completion", "stream", req.Stream, "finish", string(ans.finish),
		"scripted", !reply.isDefault(), "messages", len(req.Messages))
	if req.Stream {
		includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
		if includeUsage {
			s.reported.add(agent, ans.usage)
		}
		s.stream(w, r, ans, includeUsage, s.chunkDelay(agent, reply))
		return
	}
	s.reported.add(agent, ans.usage)
	writeJSON(w, http.StatusOK, ans.response())
}

// awaitReply waits Options.Latency plus reply's Delay, then answers reply's scripted
// error if it has one. It reports whether the caller is to answer the reply; if not, it
// has answered the scripted error, or 503 when the request or the server was cancelled
// meanwhile.
func (s *Server) awaitReply(w http.ResponseWriter, r *http.Request, reply Reply, log *slog.Logger) bool {
	if !sleep(r.Context(), s.opts.Latency+time.Duration(reply.Delay)) {
		// The client is gone (and will not see this) or the server is closing (and the
		// client should retry elsewhere or later).
		log.Debug("offline: request cancelled while waiting", "error", r.Context().Err())
		writeError(w, http.StatusServiceUnavailable, "offline: request cancelled before the reply was sent", 0)
		return false
	}
	if reply.Status != 0 {
		log.Debug("offline: scripted error", "status", reply.Status)
		writeError(w, reply.Status, reply.Message, reply.RetryAfter)
		return false
	}
	return true
}

// bodyError is the status (413 for a body over maxBodyBytes, else 400) and the message
// to answer for err, an error reading or decoding a request's JSON body.
func bodyError(err error) (int, error) {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return http.StatusRequestEntityTooLarge, fmt.Errorf("request body larger than %d bytes", tooLarge.Limit)
	}
	return http.StatusBadRequest, fmt.Errorf("could not parse the JSON body of the request: %w", err)
}

// decodeRequest reads r's body as a chat completion request. On failure it returns the
// HTTP status to answer (400 or 413) and an error whose text is the message to send.
//
// The body is read by encoding/json/v2 (the go-json-experiment mirror) with v1's
// options: the same fields and values as encoding/json accepts, read in one pass
// instead of a scan and then a decode, which made a long chat's request (64 KB) cost
// the offline model 0.7 ms instead of 0.3 ms. The body is read whole first: decoding
// from a reader grew its buffer by doubling and resumed strings across reads (0.25 ms
// and 400 KB allocated for 64 KB). The body's buffer and the decoded messages' array
// are reused from request to request (decodeBuffers), so that a long chat's calls do
// not allocate them anew each time. Unlike json.Decoder, what follows the JSON value
// is refused, as OpenAI refuses it.
func decodeRequest(w http.ResponseWriter, r *http.Request) (openai.ChatCompletionRequest, int, error) {
	buf := decodeBuffers.Get().(*decodeBuffer)
	defer buf.put()
	body, wire := &buf.body, &buf.wire
	if n := r.ContentLength; n > 0 && n <= maxBodyBytes { // a larger one is refused at the limit
		body.Grow(int(n) + bytes.MinRead) // read once, not grown by doubling
	}
	_, err := body.ReadFrom(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err == nil {
		err = jsonv2.Unmarshal(body.Bytes(), wire, jsonv1.DefaultOptionsV1())
	}
	if err != nil {
		status, err := bodyError(err)
		return openai.ChatCompletionRequest{}, status, err
	}
	req := wire.ChatCompletionRequest
	req.Messages = make([]openai.ChatCompletionMessage, len(wire.Messages))
	for i, m := range wire.Messages {
		var err error
		if req.Messages[i], err = m.message(); err != nil {
			status, err := bodyError(fmt.Errorf("messages[%d]: %w", i, err))
			return openai.ChatCompletionRequest{}, status, err
		}
	}
	return req, http.StatusOK, nil
}

// decodeBuffer is what decodeRequest reuses: the body's bytes and the decoded
// request's messages array. Nothing decodeRequest returns points into them (the
// decoder copies every string and makes new slices and maps below the messages).
type decodeBuffer struct {
	body bytes.Buffer
	wire wireRequest
}

// decodeBuffers holds decodeBuffers between requests.
var decodeBuffers = sync.Pool{New: func() any { return new(decodeBuffer) }}

// keptBufferBytes is the largest body buffer put back for reuse: a rare very large
// request's is left to the garbage collector.
const keptBufferBytes = 1 << 20

// put empties b (every message zeroed, so none of a request's members is read into
// the next one's: encoding/json decodes an array element into what the slice's array
// holds) and returns it to decodeBuffers.
func (b *decodeBuffer) put() {
	if b.body.Cap() > keptBufferBytes {
		return
	}
	msgs := b.wire.Messages[:cap(b.wire.Messages)]
	clear(msgs)
	b.wire = wireRequest{Messages: msgs[:0]}
	b.body.Reset()
	decodeBuffers.Put(b)
}

// wireRequest is a chat completion request as the server decodes it: go-openai's
// request, with the messages read in the same pass (go-openai's own
// ChatCompletionMessage.UnmarshalJSON decodes each message again, twice when its content
// is an array, which made decoding most of a long chat's model call).
type wireRequest struct {
	openai.ChatCompletionRequest
	Messages []wireMessage `json:"messages"`
}

// wireMessage is one message of a request; Content is a string, an array of parts, or
// null, as OpenAI's API takes it.
type wireMessage struct {
	Role             string               `json:"role"`
	Content          any                  `json:"content"`
	Refusal          string               `json:"refusal"`
	Name             string               `json:"name"`
	ReasoningContent string               `json:"reasoning_content"`
	FunctionCall     *openai.FunctionCall `json:"function_call"`
	ToolCalls        []openai.ToolCall    `json:"tool_calls"`
	ToolCallID       string               `json:"tool_call_id"`
}

// message is m in go-openai's form; content that is neither a string, an array of
// parts nor null is an error.
func (m wireMessage) message() (openai.ChatCompletionMessage, error) {
	out := openai.ChatCompletionMessage{Role: m.Role, Refusal: m.Refusal, Name: m.Name,
		ReasoningContent: m.ReasoningContent, FunctionCall: m.FunctionCall, ToolCalls: m.ToolCalls,
		ToolCallID: m.ToolCallID}
	switch c := m.Content.(type) {
	case nil:
	case string:
		out.Content = c
	case []any: // rare: re-read the parts into go-openai's type
		raw, err := json.Marshal(c)
		if err == nil {
			err = json.Unmarshal(raw, &out.MultiContent)
		}
		if err != nil {
			return out, fmt.Errorf("content: %w", err)
		}
	default:
		return out, fmt.Errorf("content must be a string or an array of parts, not %T", c)
	}
	return out, nil
}

// buildAnswer is the answer to req, the seq-th request of the server, from agent with the
// scripted reply (the zero Reply meaning the default reply). reply.Status must be 0.
// Scripted tool calls without an id get "call_offline_<key>_<i>", key() naming the
// conversation (conversationKey), so the same conversation gets the same ids in any
// process; key is called only then (it hashes the whole conversation).
func buildAnswer(agent string, reply Reply, req openai.ChatCompletionRequest, seq int, key func() string) answer {
	ans := answer{
		id:      "chatcmpl-offline-" + strconv.Itoa(seq),
		created: time.Now().Unix(),
		model:   req.Model,
		finish:  openai.FinishReasonStop,
	}
	if ans.model == "" {
		ans.model = ModelID
	}
	switch {
	case reply.isDefault():
		ans.content = DefaultText(agent, req.Messages)
	case len(reply.ToolCalls) > 0:
		ans.content = scriptedText(agent, reply)
		conv := ""
		if slices.ContainsFunc(reply.ToolCalls, func(c ToolCall) bool { return c.ID == "" }) {
			conv = key()
		}
		ans.toolCalls = toolCalls(reply.ToolCalls, conv)
		ans.finish = openai.FinishReasonToolCalls
	default:
		ans.content = answerText(agent, reply, req.Messages)
	}
	ans.usage = usage(req.Messages, ans)
	return ans
}

// toolCalls turns scripted calls into go-openai's form, filling in missing ids as
// "call_offline_<key>_<i>".
func toolCalls(calls []ToolCall, key string) []openai.ToolCall {
	out := make([]openai.ToolCall, len(calls))
	for i, c := range calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_offline_%s_%d", key, i)
		}
		out[i] = openai.ToolCall{
			ID:       id,
			Type:     openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments},
		}
	}
	return out
}

// usage approximates token counts as words: the prompt's are the words of every
// message's text, the completion's those of the content and tool calls of ans.
func usage(messages []openai.ChatCompletionMessage, ans answer) openai.Usage {
	var u openai.Usage
	for _, m := range messages {
		u.PromptTokens += countWords(messageText(m))
	}
	u.CompletionTokens = countWords(ans.content)
	for _, c := range ans.toolCalls {
		u.CompletionTokens += countWords(c.Function.Name) + countWords(c.Function.Arguments)
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// response is ans as a whole (non-streaming) chat completion.
func (ans answer) response() openai.ChatCompletionResponse {
	return openai.ChatCompletionResponse{
		ID:      ans.id,
		Object:  "chat.completion",
		Created: ans.created,
		Model:   ans.model,
		Choices: []openai.ChatCompletionChoice{{
			Index: 0,
			Message: openai.ChatCompletionMessage{
				Role:      openai.ChatMessageRoleAssistant,
				Content:   ans.content,
				ToolCalls: ans.toolCalls,
			},
			FinishReason: ans.finish,
		}},
		Usage: ans.usage,
	}
}

// models answers GET /v1/models (the list) and GET /v1/models/offline (the model).
func (s *Server) models(w http.ResponseWriter, path string) {
	model := openai.Model{ID: ModelID, Object: "model", OwnedBy: "agentchat", Root: ModelID}
	if path != modelsPath {
		writeJSON(w, http.StatusOK, model)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Object string         `json:"object"`
		Data   []openai.Model `json:"data"`
	}{Object: "list", Data: []openai.Model{model}})
}
