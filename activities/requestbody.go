package activities

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	openai "github.com/sashabaranov/go-openai"
)

// A Chat Completions request body is written by encodeRequest, not by go-openai.
//
// go-openai marshals a request with encoding/json, which calls
// ChatCompletionMessage.MarshalJSON for each message (an encoding/json.Marshal of its
// own) and then scans and compacts that output again: about 0.4–0.5 ms for the 54 KB
// body of a median bench turn, the largest single cost of a turn's model activity
// after the HTTP round trip (README, Performance). encodeRequest writes the same
// bytes in one pass with encoding/json/v2 (the go-json-experiment mirror) on v1's
// options; TestEncodeRequestWritesWhatGoOpenAIWrites holds it to go-openai's own
// encoding, byte for byte, on seeded generated requests.
//
// The call still goes through go-openai (its client, errors and stream reader): it
// is given the request without its messages, and doer puts the encoded body in its
// place as the request goes out (withEncodedBody).

// requestOptions are encoding/json's semantics (jsonv1.DefaultOptionsV1: HTML
// escaping, sorted map keys, legacy omitempty, invalid UTF-8 replaced) plus the
// message marshaler.
var requestOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(),
	jsonv2.WithMarshalers(jsonv2.MarshalToFunc(encodeMessage)))

// encodeRequest returns req's JSON as go-openai's client writes it (encoding/json of
// openai.ChatCompletionRequest). Errors: openai.ErrContentFieldsMisused for a message
// with both Content and MultiContent, as go-openai's MarshalJSON.
func encodeRequest(req openai.ChatCompletionRequest) ([]byte, error) {
	return jsonv2.Marshal(req, requestOptions)
}

// textMessage and partsMessage are the two shapes ChatCompletionMessage.MarshalJSON
// (go-openai v1.43.0, chat.go) writes: text content, or content parts. They convert
// from openai.ChatCompletionMessage, so a field go-openai adds breaks the build
// here instead of being dropped.
type (
	textMessage struct {
		Role             string                   `json:"role"`
		Content          string                   `json:"content,omitempty"`
		Refusal          string                   `json:"refusal,omitempty"`
		MultiContent     []openai.ChatMessagePart `json:"-"`
		Name             string                   `json:"name,omitempty"`
		ReasoningContent string                   `json:"reasoning_content,omitempty"`
		FunctionCall     *openai.FunctionCall     `json:"function_call,omitempty"`
		ToolCalls        []openai.ToolCall        `json:"tool_calls,omitempty"`
		ToolCallID       string                   `json:"tool_call_id,omitempty"`
	}
	partsMessage struct {
		Role             string                   `json:"role"`
		Content          string                   `json:"-"`
		Refusal          string                   `json:"refusal,omitempty"`
		MultiContent     []openai.ChatMessagePart `json:"content,omitempty"`
		Name             string                   `json:"name,omitempty"`
		ReasoningContent string                   `json:"reasoning_content,omitempty"`
		FunctionCall     *openai.FunctionCall     `json:"function_call,omitempty"`
		ToolCalls        []openai.ToolCall        `json:"tool_calls,omitempty"`
		ToolCallID       string                   `json:"tool_call_id,omitempty"`
	}
)

// encodeMessage writes m as ChatCompletionMessage.MarshalJSON does, into the
// request's encoder (with its options) instead of a buffer of its own. It takes a
// pointer (the request's messages are addressable as encodeRequest encodes them), so
// that no message is copied to the heap to be encoded.
func encodeMessage(enc *jsontext.Encoder, m *openai.ChatCompletionMessage) error {
	if m.Content != "" && m.MultiContent != nil {
		return openai.ErrContentFieldsMisused
	}
	if len(m.MultiContent) > 0 {
		return jsonv2.MarshalEncode(enc, (*partsMessage)(m))
	}
	return jsonv2.MarshalEncode(enc, (*textMessage)(m))
}

// bodyKey carries an *encodedBody through a model request's context.
type bodyKey struct{}

// encodedBody is a request body encodeRequest wrote; doer marks it sent when it put it
// in a request.
type encodedBody struct {
	b    []byte
	sent bool
}

// errBodyNotSent reports a request that went out without the encoded body: a client
// not built by modelClients (its HTTPDoer is not doer). The model was then asked
// without the chat's messages, and its answer is not used.
var errBodyNotSent = errors.New("activities: the model request went out without its encoded body (its client does not use doer)")

// withEncodedBody encodes req and returns the context and the request to give
// go-openai: the request without its messages (go-openai encodes only the rest), the
// context carrying the body doer sends instead. Call sent after the call returns.
func withEncodedBody(ctx context.Context, req openai.ChatCompletionRequest) (context.Context, openai.ChatCompletionRequest, *encodedBody, error) {
	b, err := encodeRequest(req)
	if err != nil {
		return ctx, req, nil, err
	}
	body := &encodedBody{b: b}
	req.Messages = nil
	return context.WithValue(ctx, bodyKey{}, body), req, body, nil
}

// check returns errBodyNotSent if doer did not send the body.
func (e *encodedBody) check() error {
	if !e.sent {
		return errBodyNotSent
	}
	return nil
}

// putEncodedBody replaces the body go-openai wrote for req with the one its context
// carries, if any.
func putEncodedBody(req *http.Request) {
	body, _ := req.Context().Value(bodyKey{}).(*encodedBody)
	if body == nil || req.Body == nil {
		return
	}
	b := body.b
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.ContentLength = int64(len(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	body.sent = true
}
