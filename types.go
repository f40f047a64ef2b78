package agentchat

import (
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// The wire types (package wire), re-exported so that services need import only this
// package: every type the Client takes or returns is one of these or the Client's own
// options and errors.
type (
	Message             = chat.Message
	Content             = chat.Content
	SendMessageInput    = wire.SendMessageInput
	TurnResult          = wire.TurnResult
	StateResult         = wire.StateResult
	UsageTotal          = wire.UsageTotal
	HistoryInput        = wire.HistoryInput
	HistoryResult       = wire.HistoryResult
	ApproveInput        = wire.ApproveInput
	CancelTurnInput     = wire.CancelTurnInput
	CancelTurnResult    = wire.CancelTurnResult
	PendingApproval     = wire.PendingApproval
	ExportInput         = wire.ExportInput
	ExportResult        = wire.ExportResult
	SelectionStrategy   = strategies.SelectionStrategy
	TerminationStrategy = strategies.TerminationStrategy
)
