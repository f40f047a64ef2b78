package offline

import (
	"fmt"
	"regexp"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// maxQuoteRunes is the longest quote DefaultText copies from a message, in runes;
// longer text is cut and ends in "…".
const maxQuoteRunes = 200

var (
	// askNameRe matches a user asking for their name ("What's my name?", "what is my name").
	askNameRe = regexp.MustCompile(`(?i)what(?:'s|’s| is) my name`)
	// tellNameRe matches a user telling their name; group 1 is the name.
	tellNameRe = regexp.MustCompile(`(?i)my name is ([\p{L}\p{N}_-]+)`)
	// recapRe matches a user asking what the conversation was about.
	recapRe = regexp.MustCompile(`(?i)what did we talk about`)
)

// DefaultText is the text of the default (unscripted) reply to messages from agent.
// It is deterministic and shows which context reached the model:
//
//	[offline] <agent> received <N> messages ("1 message"). First user message: "<first>". Last user message: "<last>".
//
// N counts all messages, whatever their role. A user message's text is its Content, or
// the text parts of its MultiContent joined with a space. Quotes are cut to 200 runes
// ending in "…". Without any user message the two quotes read "No user message." instead.
// Then, in this order:
//   - if the last user message asks for the name (`what's my name`, case-insensitive) and
//     an earlier user message says `my name is <Name>`, the latest such one:
//     ` Your name is <Name>: you said "<that earlier message>".`
//   - if the last user message contains `what did we talk about` (case-insensitive):
//     ` We talked about: "<u1>", "<u2>".` listing every earlier user message in order, or
//     ` We talked about: nothing yet.` when there is none;
//   - if there are tool-role messages: ` Tool results: <toolCallId>=<content>; ….`
func DefaultText(agent string, messages []openai.ChatCompletionMessage) string {
	var b strings.Builder
	noun := "messages"
	if len(messages) == 1 {
		noun = "message"
	}
	fmt.Fprintf(&b, "%s%s received %d %s.", textPrefix, agent, len(messages), noun)
	users := userTexts(messages)
	if len(users) == 0 {
		b.WriteString(" No user message.")
	} else {
		fmt.Fprintf(&b, " First user message: %s. Last user message: %s.",
			quote(users[0]), quote(users[len(users)-1]))
		last, earlier := users[len(users)-1], users[:len(users)-1]
		b.WriteString(nameRecall(last, earlier))
		b.WriteString(recap(last, earlier))
	}
	b.WriteString(toolResults(messages))
	return b.String()
}

// nameRecall answers "what's my name" from the latest earlier message that told it; "" otherwise.
func nameRecall(last string, earlier []string) string {
	if !askNameRe.MatchString(last) {
		return ""
	}
	for i := len(earlier) - 1; i >= 0; i-- {
		if m := tellNameRe.FindStringSubmatch(earlier[i]); m != nil {
			return fmt.Sprintf(" Your name is %s: you said %s.", m[1], quote(earlier[i]))
		}
	}
	return ""
}

// recap lists the earlier user messages when the last one asks what was talked about; "" otherwise.
func recap(last string, earlier []string) string {
	if !recapRe.MatchString(last) {
		return ""
	}
	if len(earlier) == 0 {
		return " We talked about: nothing yet."
	}
	quoted := make([]string, len(earlier))
	for i, u := range earlier {
		quoted[i] = quote(u)
	}
	return " We talked about: " + strings.Join(quoted, ", ") + "."
}

// toolResults lists the tool-role messages as "<toolCallId>=<content>"; "" when there are none.
func toolResults(messages []openai.ChatCompletionMessage) string {
	var results []string
	for _, m := range messages {
		if m.Role == openai.ChatMessageRoleTool {
			results = append(results, m.ToolCallID+"="+truncate(messageText(m)))
		}
	}
	if len(results) == 0 {
		return ""
	}
	return " Tool results: " + strings.Join(results, "; ") + "."
}

// toolErrorPrefix begins a tool result that reports an error, as agentchat sends one
// (a call a person rejected, a tool that failed, a call not run).
const toolErrorPrefix = "error: "

// answerText is the content of scripted text reply r of agent to messages. When
// messages end with tool results (the answer the script gives is to them) and one
// reports an error, the script's text, written for calls that succeeded, is not given:
// the reply says what each result says instead,
//
//	[offline] <agent>: Not done: <tool> (<callId>) failed: <error>; ….
//	[offline] <agent>: Partly done: <tool> (<callId>): <result>; <tool> (<callId>) failed: <error>.
//
// so a scripted "refunded" never follows a rejected refund.
func answerText(agent string, r Reply, messages []openai.ChatCompletionMessage) string {
	results, failed := lastResults(messages)
	if failed == 0 {
		return scriptedText(agent, r)
	}
	lead := "Not done: "
	if failed < len(results) {
		lead = "Partly done: "
	}
	return textPrefix + agent + ": " + lead + strings.Join(results, "; ") + "."
}

// lastResults describes the tool results messages end with (after the last non-tool
// message), in order: "<tool> (<callId>): <result>", or "<tool> (<callId>) failed:
// <error>" for one that reports an error, the tool named by the assistant's call of
// that id ("a tool" when none is found); and how many report an error.
func lastResults(messages []openai.ChatCompletionMessage) (results []string, failed int) {
	start := len(messages)
	for start > 0 && messages[start-1].Role == openai.ChatMessageRoleTool {
		start--
	}
	for _, m := range messages[start:] {
		text, name := messageText(m), toolName(messages[:start], m.ToolCallID)
		if err, ok := strings.CutPrefix(text, toolErrorPrefix); ok {
			results = append(results, fmt.Sprintf("%s (%s) failed: %s", name, m.ToolCallID, truncate(err)))
			failed++
			continue
		}
		results = append(results, fmt.Sprintf("%s (%s): %s", name, m.ToolCallID, truncate(text)))
	}
	return results, failed
}

// toolName is the function name of the call callID among messages' tool calls.
func toolName(messages []openai.ChatCompletionMessage, callID string) string {
	for i := len(messages) - 1; i >= 0; i-- {
		for _, c := range messages[i].ToolCalls {
			if c.ID == callID {
				return c.Function.Name
			}
		}
	}
	return "a tool"
}

// userTexts is the text of every user-role message, in order.
func userTexts(messages []openai.ChatCompletionMessage) []string {
	var texts []string
	for _, m := range messages {
		if m.Role == openai.ChatMessageRoleUser {
			texts = append(texts, messageText(m))
		}
	}
	return texts
}

// messageText is m's Content, or the text parts of its MultiContent joined with a space.
func messageText(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var parts []string
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText || (p.Type == "" && p.Text != "") {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, " ")
}

// quote is s truncated to maxQuoteRunes and wrapped in double quotes.
func quote(s string) string {
	return `"` + truncate(s) + `"`
}

// truncate cuts s to maxQuoteRunes runes, ending in "…" when it cut anything.
func truncate(s string) string {
	n := 0
	for i := range s {
		if n == maxQuoteRunes {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
