package systest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat/wire"
)

// A message's size is what the chat compares with its limit: the encoded message
// (wire.SendMessageInput.Bytes), not its text. So a message generated at, just
// under or just over a limit is so for the chat too, and the checks judge refusals by
// the same count.
func TestMessageSizeIsTheEncodedSize(t *testing.T) {
	const limit = wire.DefaultMaxMessageBytes
	for _, size := range []int{limit - 500, limit - 1, limit, limit + 1, 4 << 10} {
		m := newMessage("c1-t12", size) // m.size is the same count, by construction
		assert.Equal(t, size, wire.SendMessageInput{MessageID: m.id, Text: m.text}.Bytes(), "size %d", size)
	}
	m := newMessage("c1-t12", 10) // less than the message's id: just its id
	assert.Equal(t, "c1-t12 ", m.text)
	assert.Greater(t, m.size, 10)
}
