package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The content types of chat-state-v1.md. Any other type read from JSON is kept
// byte-for-byte (see Content.Raw) and written back unchanged.
const (
	ContentText           = "text"
	ContentImage          = "image"
	ContentFunctionCall   = "functionCall"
	ContentFunctionResult = "functionResult"
)

// Content is one part of a message. Type selects which fields are meaningful:
//
//	text            Text
//	image           URI, or Data (base64) with MediaType
//	functionCall    CallID, Name, Arguments (a JSON string)
//	functionResult  CallID, Result, optional Error
//
// A content of a type this reader does not know keeps its exact JSON in Raw; it is
// marshalled from Raw and never altered (chat-state-v1.md, "kept byte-for-byte").
type Content struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	URI       string `json:"uri,omitempty"`
	Data      string `json:"data,omitempty"`
	MediaType string `json:"mediaType,omitempty"`
	CallID    string `json:"callId,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Result    string `json:"result,omitempty"`
	Error     string `json:"error,omitempty"`

	// Raw is the verbatim JSON of a content whose Type is not one of the four above.
	Raw json.RawMessage `json:"-"`
}

// Text returns a text content.
func Text(s string) Content { return Content{Type: ContentText, Text: s} }

// Known reports whether c's type is one of the four types of chat-state-v1.md.
func (c Content) Known() bool {
	switch c.Type {
	case ContentText, ContentImage, ContentFunctionCall, ContentFunctionResult:
		return true
	}
	return false
}

func (c Content) size() int {
	if len(c.Raw) > 0 {
		return len(c.Raw)
	}
	return len(c.Type) + len(c.Text) + len(c.URI) + len(c.Data) + len(c.MediaType) +
		len(c.CallID) + len(c.Name) + len(c.Arguments) + len(c.Result) + len(c.Error)
}

// contentJSON is the plain shape, used to avoid recursion in (Un)MarshalJSON.
type contentJSON struct {
	Type      string  `json:"type"`
	Text      *string `json:"text,omitempty"`
	URI       string  `json:"uri,omitempty"`
	Data      string  `json:"data,omitempty"`
	MediaType string  `json:"mediaType,omitempty"`
	CallID    string  `json:"callId,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
	Result    *string `json:"result,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// MarshalJSON writes the fields of c's type; a text content always has "text", a
// functionCall always "arguments", a functionResult always "result", even when empty.
// An unknown type is written from Raw unchanged.
func (c Content) MarshalJSON() ([]byte, error) {
	if !c.Known() {
		if len(c.Raw) == 0 {
			return nil, fmt.Errorf("chat: content type %q has no raw JSON to write", c.Type)
		}
		return c.Raw, nil
	}
	j := contentJSON{Type: c.Type}
	switch c.Type {
	case ContentText:
		j.Text = &c.Text
	case ContentImage:
		j.URI, j.Data, j.MediaType = c.URI, c.Data, c.MediaType
	case ContentFunctionCall:
		j.CallID, j.Name, j.Arguments = c.CallID, c.Name, &c.Arguments
	case ContentFunctionResult:
		j.CallID, j.Result, j.Error = c.CallID, &c.Result, c.Error
	}
	return json.Marshal(j)
}

// errNoType is returned for a content object without a "type" string.
var errNoType = errors.New(`content has no "type"`)

// UnmarshalJSON reads a content. Known types are decoded into fields; any other type
// keeps its bytes in Raw. A content without a string "type" is an error.
//
// One decoding pass serves both: an unknown type may use field names of the known
// types with other JSON types ("text": {...}), which only makes the pass report a type
// error on that field, and such a content is kept as it is.
func (c *Content) UnmarshalJSON(b []byte) error {
	var j contentJSON
	err := json.Unmarshal(b, &j)
	var typeErr *json.UnmarshalTypeError
	if err != nil && (!errors.As(err, &typeErr) || typeErr.Field == "" || typeErr.Field == "type") {
		return fmt.Errorf("chat: content: %w", err) // not JSON, not an object, or "type" not a string
	}
	if j.Type == "" {
		return fmt.Errorf("chat: %w", errNoType)
	}
	if !(Content{Type: j.Type}).Known() {
		*c = Content{Type: j.Type, Raw: append(json.RawMessage(nil), bytes.TrimSpace(b)...)}
		return nil
	}
	if err != nil {
		return fmt.Errorf("chat: content: %w", err)
	}
	*c = Content{Type: j.Type}
	c.URI, c.Data, c.MediaType = j.URI, j.Data, j.MediaType
	c.CallID, c.Name, c.Error = j.CallID, j.Name, j.Error
	if j.Text != nil {
		c.Text = *j.Text
	}
	if j.Arguments != nil {
		c.Arguments = *j.Arguments
	}
	if j.Result != nil {
		c.Result = *j.Result
	}
	return nil
}
