package activities

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// chatMessages maps the primary history to Chat Completions messages, after a system
// message with the agent's instructions (if any). Assistant messages keep their author
// in "name" (so an agent can tell its own turns from another agent's); function calls
// become tool_calls and each functionResult a "tool" message. Content types the API
// has no form for are left out of the request; they stay in the history.
func chatMessages(instructions string, history []chat.Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(history)+1)
	if instructions != "" {
		out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: instructions})
	}
	names := authorNames{}
	for _, m := range history {
		out = append(out, chatMessage(m, names)...)
	}
	return out
}

// authorNames memoizes OpenAIName over one request's messages, which have a few
// authors among hundreds of messages.
type authorNames map[string]string

func (n authorNames) of(author string) string {
	if author == "" {
		return ""
	}
	name, ok := n[author]
	if !ok {
		name = OpenAIName(author)
		n[author] = name
	}
	return name
}

func chatMessage(m chat.Message, names authorNames) []openai.ChatCompletionMessage {
	switch m.Role {
	case chat.RoleTool:
		var out []openai.ChatCompletionMessage
		for _, c := range m.Contents {
			if c.Type == chat.ContentFunctionResult {
				out = append(out, openai.ChatCompletionMessage{
					Role: openai.ChatMessageRoleTool, ToolCallID: wireCallID(c.CallID), Content: toolResultText(c)})
			}
		}
		return out
	case chat.RoleAssistant:
		msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Name: names.of(m.AuthorName), Content: m.Text()}
		for _, c := range m.FunctionCalls() {
			msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: wireCallID(c.CallID), Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
		return []openai.ChatCompletionMessage{msg}
	default: // user, system
		msg := openai.ChatCompletionMessage{Role: string(m.Role), Name: names.of(m.AuthorName)}
		if parts := multiContent(m); parts != nil {
			msg.MultiContent = parts
		} else {
			msg.Content = m.Text()
		}
		return []openai.ChatCompletionMessage{msg}
	}
}

// multiContent returns text and image parts when m has an image; nil otherwise, so
// text-only messages go as plain content (which every OpenAI-compatible server accepts).
func multiContent(m chat.Message) []openai.ChatMessagePart {
	if !hasImage(m) {
		return nil
	}
	var parts []openai.ChatMessagePart
	for _, c := range m.Contents {
		switch c.Type {
		case chat.ContentText:
			parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: c.Text})
		case chat.ContentImage:
			parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL,
				ImageURL: &openai.ChatMessageImageURL{URL: imageURL(c)}})
		}
	}
	return parts
}

// hasImage reports whether m has an image content.
func hasImage(m chat.Message) bool {
	return slices.ContainsFunc(m.Contents, func(c chat.Content) bool { return c.Type == chat.ContentImage })
}

// imageURL is the URL an image content is sent as: its URI, else a data: URL of its
// inline data.
func imageURL(c chat.Content) string {
	if c.URI != "" {
		return c.URI
	}
	return "data:" + c.MediaType + ";base64," + c.Data
}

func toolResultText(c chat.Content) string {
	if c.Error != "" {
		return "error: " + c.Error
	}
	return c.Result
}

// OpenAIName returns author as OpenAI accepts a message "name" (chat.FunctionName:
// characters outside chat.FunctionNamePattern's become "_", cut to 64). It returns ""
// (the field is then omitted) when nothing of author is usable.
func OpenAIName(author string) string {
	name := chat.FunctionName(author)
	if strings.Trim(name, "_") == "" {
		return ""
	}
	return name
}

// wireCallID is the id a call travels under to the model: id itself when OpenAI takes
// it, else "call_" and 32 hex digits of its SHA-256, the same in any process. A chat's
// call ids are longer when a document brings them from another provider, or when the
// chat renames a repeated one after its reply id (which holds the client's messageId).
// The chat keeps its own ids: the tool's idempotency key and the history use them.
func wireCallID(id string) string {
	if len(id) <= wire.MaxCallIDLen {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "call_" + hex.EncodeToString(sum[:16])
}
