package agentchat

import (
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/workflows"
)

// The wire types, re-exported so that services need import only this package.
type (
	Message             = chat.Message
	Content             = chat.Content
	SendMessageInput    = workflows.SendMessageInput
	TurnResult          = workflows.TurnResult
	StateResult         = workflows.StateResult
	HistoryInput        = workflows.HistoryInput
	HistoryResult       = workflows.HistoryResult
	ApproveInput        = workflows.ApproveInput
	PendingApproval     = workflows.PendingApproval
	SelectionStrategy   = strategies.SelectionStrategy
	TerminationStrategy = strategies.TerminationStrategy
)
