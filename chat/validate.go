package chat

import (
	"errors"
	"fmt"
	"strings"
)

// Errors returned by Message.Validate; test with errors.Is.
var (
	ErrEmptyMessage   = errors.New("message has no content")
	ErrNoMessageID    = errors.New("message has no messageId")
	ErrInvalidRole    = errors.New("message role is not system, user, assistant or tool")
	ErrInvalidContent = errors.New("message content is malformed")
)

// Validate checks the shape of one message: a messageId, a known role, at least one
// content, and for each known content the fields its type requires (a text content with
// non-blank text, an image with uri or data+mediaType, function calls and results with a
// callId). Unknown content types are accepted as they are (chat-state-v1.md).
func (m Message) Validate() error {
	if m.MessageID == "" {
		return ErrNoMessageID
	}
	if !m.Role.Valid() {
		return fmt.Errorf("%w: %q", ErrInvalidRole, m.Role)
	}
	if len(m.Contents) == 0 {
		return ErrEmptyMessage
	}
	for i, c := range m.Contents {
		if c.Type == ContentText && isBlank(c.Text) {
			if len(m.Contents) == 1 {
				return fmt.Errorf("%w: its text is blank", ErrEmptyMessage)
			}
			return blankPart(i)
		}
		if err := c.validate(); err != nil {
			return fmt.Errorf("contents[%d]: %w", i, err)
		}
	}
	return nil
}

// blankPart is a blank text content at index i of a message of several contents; it
// matches ErrEmptyMessage (errors.Is) without saying the message has none.
type blankPart int

func (i blankPart) Error() string        { return fmt.Sprintf("contents[%d]: text is blank", int(i)) }
func (i blankPart) Is(target error) bool { return target == ErrEmptyMessage }

func (c Content) validate() error {
	switch c.Type {
	case ContentText:
		if isBlank(c.Text) {
			return fmt.Errorf("%w: text is blank", ErrEmptyMessage)
		}
	case ContentImage:
		if c.URI == "" && (c.Data == "" || c.MediaType == "") {
			return fmt.Errorf("%w: image needs uri, or data with mediaType", ErrInvalidContent)
		}
	case ContentFunctionCall:
		if c.CallID == "" || c.Name == "" {
			return fmt.Errorf("%w: functionCall needs callId and name", ErrInvalidContent)
		}
	case ContentFunctionResult:
		if c.CallID == "" {
			return fmt.Errorf("%w: functionResult needs callId", ErrInvalidContent)
		}
	case "":
		return fmt.Errorf("%w: %w", ErrInvalidContent, errNoType)
	}
	return nil
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
