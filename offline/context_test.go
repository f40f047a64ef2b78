package offline_test

import (
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat/offline"
)

func msg(role, content string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: role, Content: content}
}

func TestDefaultTextQuotesFirstAndLastUserMessage(t *testing.T) {
	messages := []openai.ChatCompletionMessage{
		msg(openai.ChatMessageRoleSystem, "You are helpful."),
		msg(openai.ChatMessageRoleUser, "first question"),
		msg(openai.ChatMessageRoleAssistant, "first answer"),
		msg(openai.ChatMessageRoleUser, "second question"),
		msg(openai.ChatMessageRoleUser, "third question"),
	}
	assert.Equal(t,
		`[offline] planner received 5 messages. First user message: "first question". Last user message: "third question".`,
		offline.DefaultText("planner", messages))
}

func TestDefaultTextWithoutUserMessage(t *testing.T) {
	messages := []openai.ChatCompletionMessage{msg(openai.ChatMessageRoleSystem, "You are helpful.")}
	assert.Equal(t, `[offline] a received 1 message. No user message.`, offline.DefaultText("a", messages))
}

func TestDefaultTextJoinsTextPartsOfMultiContent(t *testing.T) {
	messages := []openai.ChatCompletionMessage{{
		Role: openai.ChatMessageRoleUser,
		MultiContent: []openai.ChatMessagePart{
			{Type: openai.ChatMessagePartTypeText, Text: "look at"},
			{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "http://x/cat.png"}},
			{Type: openai.ChatMessagePartTypeText, Text: "this cat"},
		},
	}}
	assert.Contains(t, offline.DefaultText("a", messages), `First user message: "look at this cat".`)
}

func TestDefaultTextTruncatesQuotesTo200Runes(t *testing.T) {
	long := strings.Repeat("é", 250)
	text := offline.DefaultText("a", []openai.ChatCompletionMessage{msg(openai.ChatMessageRoleUser, long)})
	want := `"` + strings.Repeat("é", 200) + `…"`
	assert.Equal(t, 2, strings.Count(text, want), text)
	assert.NotContains(t, text, strings.Repeat("é", 201))

	exact := strings.Repeat("x", 200)
	text = offline.DefaultText("a", []openai.ChatCompletionMessage{msg(openai.ChatMessageRoleUser, exact)})
	assert.Contains(t, text, `"`+exact+`"`)
	assert.NotContains(t, text, "…")
}

func TestDefaultTextRecallsTheLatestNameGiven(t *testing.T) {
	messages := []openai.ChatCompletionMessage{
		msg(openai.ChatMessageRoleUser, "my name is Bob"),
		msg(openai.ChatMessageRoleUser, "Actually, MY NAME IS Zoë-2, sorry"),
		msg(openai.ChatMessageRoleUser, "so what is my name?"),
	}
	assert.True(t, strings.HasSuffix(offline.DefaultText("a", messages),
		` Your name is Zoë-2: you said "Actually, MY NAME IS Zoë-2, sorry".`))
}

func TestDefaultTextDoesNotInventAName(t *testing.T) {
	for name, messages := range map[string][]openai.ChatCompletionMessage{
		"never told": {msg(openai.ChatMessageRoleUser, "hi"), msg(openai.ChatMessageRoleUser, "What's my name?")},
		"not asked":  {msg(openai.ChatMessageRoleUser, "My name is Alice"), msg(openai.ChatMessageRoleUser, "hi")},
		// Only earlier messages count: the question itself does not tell the name.
		"told in question": {msg(openai.ChatMessageRoleUser, "My name is Alice, what's my name?")},
	} {
		assert.NotContains(t, offline.DefaultText("a", messages), "Your name is", name)
	}
}

func TestDefaultTextRecapsEarlierUserMessages(t *testing.T) {
	messages := []openai.ChatCompletionMessage{
		msg(openai.ChatMessageRoleSystem, "sys"),
		msg(openai.ChatMessageRoleUser, "Tell me about Temporal"),
		msg(openai.ChatMessageRoleAssistant, "It is a workflow engine."),
		msg(openai.ChatMessageRoleUser, "And about Go?"),
		msg(openai.ChatMessageRoleAssistant, "A language."),
		msg(openai.ChatMessageRoleUser, "What did we talk about?"),
	}
	assert.True(t, strings.HasSuffix(offline.DefaultText("a", messages),
		` We talked about: "Tell me about Temporal", "And about Go?".`))

	alone := []openai.ChatCompletionMessage{msg(openai.ChatMessageRoleUser, "what did we talk about")}
	assert.True(t, strings.HasSuffix(offline.DefaultText("a", alone), ` We talked about: nothing yet.`))
}

func TestDefaultTextListsToolResults(t *testing.T) {
	messages := []openai.ChatCompletionMessage{
		msg(openai.ChatMessageRoleUser, "Weather in Oslo and Rome?"),
		{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{
			{ID: "call_1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "weather", Arguments: `{"city":"Oslo"}`}},
			{ID: "call_2", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "weather", Arguments: `{"city":"Rome"}`}},
		}},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_1", Content: "3C rain"},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_2", Content: "21C sun"},
	}
	assert.Equal(t,
		`[offline] a received 4 messages. First user message: "Weather in Oslo and Rome?". `+
			`Last user message: "Weather in Oslo and Rome?". Tool results: call_1=3C rain; call_2=21C sun.`,
		offline.DefaultText("a", messages))
}
