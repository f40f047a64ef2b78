package chatstate

import (
	"strconv"
	"strings"
	"time"

	"github.com/agentchat/agentchat/chat"
)

// The shape check: the JSON kinds of chat-state v1, as chat-state-v1.schema.json has
// them. It runs on a document that is not in canonical form, before the digest is
// checked, so that a document this reader would read differently from what it says
// (an unknown or misspelt member, a null, a number for a string) is refused naming the
// field instead of being read partly.

// check checks one value at path.
type check func(path string, n *node) error

// fieldSpec is one member an object may have.
type fieldSpec struct {
	name     string
	required bool
	check    check
}

func checkObject(what string, specs []fieldSpec) check {
	return func(path string, n *node) error {
		if n.kind != '{' {
			return fieldErr(path, "is "+n.what()+", not an object")
		}
	members:
		for i, key := range n.keys {
			for _, s := range specs {
				if s.name == key {
					if err := s.check(member(path, key), n.vals[i]); err != nil {
						return err
					}
					continue members
				}
			}
			return fieldErr(member(path, key), "is not a member of "+what+" in chat-state v1")
		}
		for _, s := range specs {
			if s.required && n.get(s.name) == nil {
				return fieldErr(member(path, s.name), "is missing")
			}
		}
		return nil
	}
}

func checkArray(elem check) check {
	return func(path string, n *node) error {
		if n.kind != '[' {
			return fieldErr(path, "is "+n.what()+", not an array")
		}
		for i, e := range n.elems {
			if err := elem(index(path, i), e); err != nil {
				return err
			}
		}
		return nil
	}
}

func checkString(path string, n *node) error {
	if n.kind != '"' {
		return fieldErr(path, "is "+n.what()+", not a string")
	}
	return nil
}

func checkBool(path string, n *node) error {
	if n.kind != 't' {
		return fieldErr(path, "is "+n.what()+", not a boolean")
	}
	return nil
}

func checkInteger(path string, n *node) error {
	if _, err := strconv.Atoi(n.str); n.kind != '0' || err != nil {
		return fieldErr(path, "is "+n.what()+", not an integer")
	}
	return nil
}

// checkCount accepts a non-negative integer that fits an int: a token count.
func checkCount(path string, n *node) error {
	if err := checkInteger(path, n); err != nil {
		return err
	}
	if strings.HasPrefix(n.str, "-") {
		return fieldErr(path, "is "+n.str+", a negative count")
	}
	return nil
}

// checkTime accepts what encoding/json reads into a time.Time: an RFC 3339 string.
func checkTime(path string, n *node) error {
	if err := checkString(path, n); err != nil {
		return err
	}
	var t time.Time
	if err := t.UnmarshalText([]byte(n.str)); err != nil {
		return fieldErr(path, strconv.Quote(clip(n.str))+" is not an RFC 3339 time")
	}
	return nil
}

// checkFreeObject accepts any object: states and unknown contents are kept as they are.
func checkFreeObject(path string, n *node) error {
	if n.kind != '{' {
		return fieldErr(path, "is "+n.what()+", not an object")
	}
	return nil
}

var (
	textContent = checkObject("a text content", []fieldSpec{
		{"type", true, checkString}, {"text", true, checkString},
	})
	imageContent = checkObject("an image content", []fieldSpec{
		{"type", true, checkString}, {"uri", false, checkString},
		{"data", false, checkString}, {"mediaType", false, checkString},
	})
	functionCallContent = checkObject("a functionCall content", []fieldSpec{
		{"type", true, checkString}, {"callId", true, checkString},
		{"name", true, checkString}, {"arguments", true, checkString},
	})
	functionResultContent = checkObject("a functionResult content", []fieldSpec{
		{"type", true, checkString}, {"callId", true, checkString},
		{"result", true, checkString}, {"error", false, checkString},
	})
)

// checkContent checks a content by its type; a type this reader does not know may have
// any members.
func checkContent(path string, n *node) error {
	if n.kind != '{' {
		return fieldErr(path, "is "+n.what()+", not an object")
	}
	t := n.get("type")
	if t == nil {
		return fieldErr(member(path, "type"), "is missing")
	}
	if t.kind != '"' || t.str == "" {
		return fieldErr(member(path, "type"), "is "+t.what()+", not a content type")
	}
	switch t.str {
	case chat.ContentText:
		return textContent(path, n)
	case chat.ContentImage:
		return imageContent(path, n)
	case chat.ContentFunctionCall:
		return functionCallContent(path, n)
	case chat.ContentFunctionResult:
		return functionResultContent(path, n)
	}
	return nil
}

var checkMessage = checkObject("a message", []fieldSpec{
	{"messageId", true, checkString},
	{"role", true, checkString},
	{"authorName", false, checkString},
	{"agentId", false, checkString},
	{"createdAt", false, checkTime},
	{"contents", true, checkArray(checkContent)},
	{"usage", false, checkObject("a message's usage", []fieldSpec{
		{"model", false, checkString}, {"inputTokens", true, checkCount},
		{"outputTokens", true, checkCount}, {"cachedTokens", false, checkCount},
	})},
})

var checkStrategy = checkObject("a strategy", []fieldSpec{
	{"type", true, checkString}, {"state", true, checkFreeObject},
})

// documentFields are the members of the document; digest is added when required.
var documentFields = []fieldSpec{
	{"schemaVersion", true, checkInteger},
	{"chatId", true, checkString},
	{"exportedAt", true, checkTime},
	{"source", true, checkObject("source", []fieldSpec{
		{"namespace", true, checkString}, {"workflowId", true, checkString},
		{"runId", false, checkString}, {"cluster", false, checkString},
	})},
	{"history", true, checkArray(checkMessage)},
	{"participants", true, checkArray(checkObject("a participant", []fieldSpec{
		{"id", true, checkString}, {"name", true, checkString}, {"type", true, checkString},
	}))},
	{"channels", true, checkArray(checkObject("a channel", []fieldSpec{
		{"channelKey", true, checkString}, {"channelType", true, checkString},
		{"channelState", true, checkFreeObject},
	}))},
	{"strategies", true, checkObject("strategies", []fieldSpec{
		{"selection", true, checkStrategy}, {"termination", true, checkStrategy},
		{"isComplete", true, checkBool},
	})},
	{"pendingTurns", true, checkArray(checkMessage)},
}

// checkShape checks root against the JSON shape of chat-state v1. A document as read
// must have its digest; one produced by an upgrade has none.
func checkShape(root *node, digestRequired bool) error {
	specs := append(documentFields[:len(documentFields):len(documentFields)], fieldSpec{"digest", digestRequired, checkString})
	return checkObject("the document", specs)("", root)
}
