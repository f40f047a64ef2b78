package agents

import "github.com/agentchat/agentchat/chat"

// InvokeInput is the input of the activity that runs one agent reply (for kind
// chat_completion: one Chat Completions call). History is the chat as this agent's
// channel sees it, oldest first; the activity adds the agent's instructions as the
// system message.
type InvokeInput struct {
	ChatID  string         `json:"chatId"`
	AgentID string         `json:"agentId"`
	TurnID  string         `json:"turnId"` // messageId of the user turn being answered
	History []chat.Message `json:"history"`
}

// InvokeResult is the agent's reply: one assistant message's contents (text, and for
// tool calls functionCall contents). The workflow assigns ids, author and time.
type InvokeResult struct {
	Contents []chat.Content `json:"contents"`
	// Model is the model that answered, as the provider reported it.
	Model string `json:"model,omitempty"`
	// PromptTokens and CompletionTokens are the provider's usage counts, if reported.
	PromptTokens     int `json:"promptTokens,omitempty"`
	CompletionTokens int `json:"completionTokens,omitempty"`
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
