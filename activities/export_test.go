package activities

// SaysYes exposes saysYes to the external tests.
var SaysYes = saysYes

// ChatMessages and ResponsesInput expose the two request mappings to the external tests.
var (
	ChatMessages   = chatMessages
	ResponsesInput = responsesInput
)

// StreamAllDocuments makes ImportChat read every document the store can open in place
// a message at a time, however small (wire.StreamDocumentBytes), until the test ends.
func StreamAllDocuments(t interface{ Cleanup(func()) }) {
	old := streamDocumentBytes
	streamDocumentBytes = 0
	t.Cleanup(func() { streamDocumentBytes = old })
}

// PageBatchBytes sets how many bytes of pages WritePages commits at once, and an
// import read in place gives it at once (pageBatchBytes), until the test ends.
func PageBatchBytes(t interface{ Cleanup(func()) }, n int) {
	old := pageBatchBytes
	pageBatchBytes = n
	t.Cleanup(func() { pageBatchBytes = old })
}
