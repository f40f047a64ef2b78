package chatstate

import (
	"encoding/json"

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
