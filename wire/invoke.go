package wire

import (
	"encoding/json"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
)

// InvokeInput is the input of the activity that runs one agent reply (for kind
// chat_completion: one Chat Completions call; for responses: one Responses call; for
// assistant: one Assistants run). The activity adds the agent's instructions (as the
// system message, the request's instructions, or the run's instructions).
//
// The history the agent sees comes one of two ways. A short history travels inline in
// History, already reduced. A longer one is read by the activity from the chat run
// itself (its History query, the first HistoryLength messages) and then reduced with
// Reducer: then each turn adds to the workflow's event history only its own messages,
// not the whole chat again. Messages without contents are stubs whose bodies are in
// the message store named Store.
type InvokeInput struct {
	ChatID  string         `json:"chatId"`
	RunID   string         `json:"runId,omitempty"`
	AgentID string         `json:"agentId"`
	TurnID  string         `json:"turnId"` // messageId of the user turn being answered
	History []chat.Message `json:"history,omitempty"`
	// HistoryLength is how many messages of the run to read when History is empty.
	HistoryLength int `json:"historyLength,omitempty"`
	// Base is the index of the first message the call reads: once a chat keeps its
	// older messages in pages of its message store (PagedHistory), an agent sees the
	// window of the latest ones, from Base on (at least WindowMessages of them). All
	// other indexes here are indexes in the chat, not in the window.
	Base int `json:"base,omitempty"`
	// Committed messages (the first Committed) belong to finished turns and never
	// change in this run; the activity may cache them.
	Committed int `json:"committed,omitempty"`
	// Delta is messages [DeltaFrom, HistoryLength): what the chat added since its
	// previous model call in this run. A worker that has the run's first DeltaFrom
	// messages cached needs no query; any other reads the run.
	DeltaFrom int                `json:"deltaFrom,omitempty"`
	Delta     []chat.Message     `json:"delta,omitempty"`
	Reducer   strategies.Reducer `json:"reducer,omitzero"`
	Store     string             `json:"store,omitempty"`
	// ReplyID is the messageId the reply will have; a reply too large for a payload is
	// stored under it. Service-thread kinds also make it the channel's new watermark.
	ReplyID string `json:"replyId,omitempty"`
	// ChannelState is the participant's channel state (chat-state-v1.md channelState):
	// for the service-thread kinds a ResponsesThreadState or AssistantThreadState; empty
	// or {} for a new channel. chat_completion agents ignore it.
	ChannelState json.RawMessage `json:"channelState,omitempty"`
	// HistoryFrom, for the service-thread kinds, is the index in the chat's history of
	// the first message the service has not seen (the one after the channel's
	// watermark): History then holds only the messages from there on, or, read by
	// reference, the run's messages [HistoryFrom, HistoryLength). Zero for a new channel,
	// which is sent the whole history.
	HistoryFrom int `json:"historyFrom,omitempty"`
	// ToolChoice is the request's tool_choice: "" lets the model choose; ToolChoiceNone
	// makes it answer without calling tools (the last call of a reply that reached its
	// maxToolRounds). The tools stay in the request, so its history of calls stays valid.
	ToolChoice string `json:"toolChoice,omitempty"`
	// Tools names the tools the chat resolved for the participant when it started
	// (Participant.Tools' names; [] for none): the model is offered only these, the
	// tools the chat can run. Absent (nil), as from a workflow before it was set: every
	// tool of the agent's definition on this worker.
	Tools []string `json:"tools"`
}

// ToolChoiceNone is InvokeInput.ToolChoice for a reply without tool calls (OpenAI's
// tool_choice "none").
const ToolChoiceNone = "none"

// StoreMessagesInput asks the worker to put message bodies into a message store:
// Store names it ("" = the worker's default store).
type StoreMessagesInput struct {
	ChatID   string         `json:"chatId"`
	Store    string         `json:"store,omitempty"`
	Messages []chat.Message `json:"messages"`
}

// StoreMessagesResult names the store the bodies went to.
type StoreMessagesResult struct {
	Store string `json:"store"`
}

// InvokeResult is the agent's reply: one assistant message's contents (text, and for
// tool calls functionCall contents). The workflow assigns ids, author and time.
type InvokeResult struct {
	Contents []chat.Content `json:"contents"`
	// Stored names the message store that holds the reply's contents when they were
	// too large to return (Contents is then empty).
	Stored string `json:"stored,omitempty"`
	// Model is the model that answered, as the provider reported it.
	Model string `json:"model,omitempty"`
	// PromptTokens and CompletionTokens are the provider's usage counts, if reported.
	PromptTokens     int `json:"promptTokens,omitempty"`
	CompletionTokens int `json:"completionTokens,omitempty"`
	// Usage is the call's usage as the reply message records it (model, input, output
	// and cached tokens); nil when the provider reported none.
	Usage *chat.Usage `json:"usage,omitempty"`
	// Cost is the estimated cost of Usage at the agent config's price of the model
	// (agents.Price, per million tokens); zero when the config prices it not.
	Cost float64 `json:"cost,omitempty"`
	// ChannelState is the participant's channel state after the call, for the
	// service-thread kinds (the service's new ids, and the reply's messageId as the
	// watermark); empty for chat_completion, whose channel state does not change here.
	ChannelState json.RawMessage `json:"channelState,omitempty"`
}

// ResolveInput is the input of the activity that looks participants up in the worker's
// registry when a chat starts.
type ResolveInput struct {
	AgentIDs []string `json:"agentIds"`
}

// ResolveResult lists the resolved participants in the order asked.
type ResolveResult struct {
	Participants []Participant `json:"participants"`
}

// AgentHeader is the HTTP request header in which the model activity names the calling
// agent id on every request. Providers ignore it; the offline model uses it to answer
// as that agent and to follow that agent's script.
const AgentHeader = "X-Agentchat-Agent"

// ChatHeader names the chat (its id) on every model request, beside AgentHeader; the
// offline model follows an agent's script per chat.
const ChatHeader = "X-Agentchat-Chat"

// AuthorHeader gives, on an agent's own model call (not a selector's, judge's or
// summary's), the "name" the agent's replies carry in the request's messages (its
// participant name as OpenAI takes it; empty when they carry none). Providers ignore
// it; the offline model counts the agent's replies by it, so that its script follows
// the conversation in any process.
const AuthorHeader = "X-Agentchat-Author"

// MaxCallIDLen is the longest tool call id (tool_calls[].id, tool_call_id) that OpenAI's
// Chat Completions accepts, in bytes: a longer one is refused with "string too long.
// Expected a string with maximum length 40" (code string_above_max_length). The
// activities send longer ids of a chat under short ones; the offline model refuses them.
const MaxCallIDLen = 40

// Candidate is a participant a selector may name.
type Candidate struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// SelectInput asks the worker who speaks next: the selector agent (llm) or function
// reads History (as InvokeInput describes it) and names one of Candidates.
type SelectInput struct {
	History    InvokeInput `json:"history"`
	Agent      string      `json:"agent,omitempty"`
	Function   string      `json:"function,omitempty"`
	Candidates []Candidate `json:"candidates"`
}

// SelectResult is the chosen agent id ("" when the answer named no candidate) and what
// the selector said, for errors.
type SelectResult struct {
	AgentID string `json:"agentId"`
	Said    string `json:"said,omitempty"`
}

// JudgeInput asks the worker whether the chat has reached its goal: the judge agent
// (llm) or function reads History.
type JudgeInput struct {
	History  InvokeInput `json:"history"`
	Agent    string      `json:"agent,omitempty"`
	Function string      `json:"function,omitempty"`
}

// JudgeResult is the verdict and what the judge said.
type JudgeResult struct {
	Done bool   `json:"done"`
	Said string `json:"said,omitempty"`
}

// SummarizeInput asks the worker to summarize part of a chat with an agent's model:
// History describes the messages to fold in (HistoryFrom..HistoryLength, or inline),
// Previous is the summary so far.
type SummarizeInput struct {
	History  InvokeInput `json:"history"`
	Agent    string      `json:"agent"`
	Previous string      `json:"previous,omitempty"`
}

// SummarizeResult is the new summary.
type SummarizeResult struct {
	Summary string `json:"summary"`
}
