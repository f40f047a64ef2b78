package chatstate

import (
	"errors"
	"strconv"
)

// ErrInvalidDocument is wrapped by every error about a document's content: test with
// errors.Is, or errors.As to a *FieldError for the field.
var ErrInvalidDocument = errors.New("chat-state: invalid document")

// FieldError is every validation error of Encode and Decode: the JSON path of the field
// and what is wrong with it. Field is like "history[3].contents[0].callId",
// "schemaVersion", "digest" or "channels[1].channelKey"; it is empty when the problem is
// the document as a whole (not JSON, not an object).
type FieldError struct {
	Field   string
	Problem string
}

// Error returns "chat-state: <field>: <problem>".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return "chat-state: " + e.Problem
	}
	return "chat-state: " + e.Field + ": " + e.Problem
}

// Unwrap returns ErrInvalidDocument.
func (e *FieldError) Unwrap() error { return ErrInvalidDocument }

func fieldErr(field, problem string) error { return &FieldError{Field: field, Problem: problem} }

// path helpers: member and index of a JSON path.
func member(parent, name string) string {
	if parent == "" || name == "" {
		return parent + name
	}
	return parent + "." + name
}

func index(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// contentPath returns list[i].contents[j].
func contentPath(list string, i, j int) string {
	return index(member(index(list, i), "contents"), j)
}
