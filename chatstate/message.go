package chatstate

import (
	"encoding/json"
	"errors"

	"github.com/agentchat/agentchat/chat"
)

// EncodeMessage returns m as a document's history holds it: canonical JSON (RFC 8785),
// which encoding/json reads back into the same chat.Message. Its error is a *FieldError
// for a content it cannot write (an unknown type without Raw).
func EncodeMessage(m chat.Message) ([]byte, error) {
	e := encoder{b: make([]byte, 0, 128+m.Size())}
	if err := e.message("message", 0, m); err != nil {
		return nil, err
	}
	return e.b, nil
}

// DecodeMessage reads one message's JSON into what encoding/json would read from it.
// Bytes laid out as EncodeMessage writes them take a faster reader (FuzzReadMessages
// holds it to encoding/json's reading); any other JSON is read by encoding/json, whose
// error it returns.
func DecodeMessage(b []byte) (chat.Message, error) {
	if m, err := readMessage(b); err == nil {
		return m, nil
	}
	var m chat.Message
	err := json.Unmarshal(b, &m)
	return m, err
}

// DecodeMessages reads a JSON array of messages, each as DecodeMessage reads one: the
// canonical layout EncodeMessage writes is read by the fast reader, anything else by
// encoding/json. A null array is an error; an empty one is an empty, non-nil slice.
func DecodeMessages(b []byte) ([]chat.Message, error) {
	if ms, err := readMessages(b); err == nil {
		return ms, nil
	}
	var ms []chat.Message
	if err := json.Unmarshal(b, &ms); err != nil {
		return nil, err
	}
	if ms == nil {
		return nil, errors.New("chatstate: a message list is null")
	}
	return ms, nil
}
