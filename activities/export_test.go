package activities

// SaysYes exposes saysYes to the external tests.
var SaysYes = saysYes

// ChatMessages and ResponsesInput expose the two request mappings to the external tests.
var (
	ChatMessages   = chatMessages
	ResponsesInput = responsesInput
)
