package agentchat

import (
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// The wire types, re-exported so that services need import only this package.
type (
	Message             = chat.Message
	Content             = chat.Content
	SendMessageInput    = wire.SendMessageInput
	TurnResult          = wire.TurnResult
	StateResult         = wire.StateResult
	HistoryInput        = wire.HistoryInput
	HistoryResult       = wire.HistoryResult
	ApproveInput        = wire.ApproveInput
	PendingApproval     = wire.PendingApproval
	SelectionStrategy   = strategies.SelectionStrategy
	TerminationStrategy = strategies.TerminationStrategy
)
