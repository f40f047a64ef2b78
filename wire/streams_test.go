package wire_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agentchat/agentchat/wire"
)

// An event's item data is the base64 of a serialized Payload with encoding json/plain
// and the event's JSON as data, as @temporalio/workflow-streams' decodePayloadWire and
// the default payload converter read it.
func TestStreamDataIsABase64Payload(t *testing.T) {
	ev := wire.StreamEvent{Type: wire.EventTextDelta, TurnID: "m1", MessageID: "m1/1", Attempt: 1, Text: "héllo"}
	data, err := wire.EncodeStreamData(ev)
	require.NoError(t, err)
	raw, err := base64.StdEncoding.DecodeString(data)
	require.NoError(t, err)
	var p commonpb.Payload
	require.NoError(t, proto.Unmarshal(raw, &p))
	assert.Equal(t, "json/plain", string(p.GetMetadata()["encoding"]))
	assert.JSONEq(t, `{"type":"textDelta","turnId":"m1","messageId":"m1/1","attempt":1,"text":"héllo"}`, string(p.GetData()))

	var back wire.StreamEvent
	require.NoError(t, wire.DecodeStreamData(data, &back))
	assert.Equal(t, ev, back)
	assert.Equal(t, data, wire.EncodedStreamEvent(ev), "the encoding is deterministic")
}

func TestDecodeStreamDataRefusesWhatIsNotAPayload(t *testing.T) {
	var ev wire.StreamEvent
	assert.ErrorContains(t, wire.DecodeStreamData("not base64!", &ev), "not base64")
	assert.ErrorContains(t, wire.DecodeStreamData(base64.StdEncoding.EncodeToString([]byte{0xff, 0xff}), &ev), "not a Payload")
}

// Whatever a publisher sends as item data decodes to an event or an error, never a panic.
func FuzzDecodeStreamData(f *testing.F) {
	f.Add(wire.EncodedStreamEvent(wire.StreamEvent{Type: wire.EventTextDelta, Text: "x"}))
	f.Add("")
	f.Add("CgA=")
	f.Fuzz(func(t *testing.T, data string) {
		var ev wire.StreamEvent
		_ = wire.DecodeStreamData(data, &ev)
	})
}

func TestSplitDeltaCutsAtRuneBoundaries(t *testing.T) {
	text := strings.Repeat("é", wire.StreamDeltaBytes) // two bytes each
	pieces := wire.SplitDelta(text)
	require.Len(t, pieces, 2)
	assert.Equal(t, text, strings.Join(pieces, ""))
	for _, p := range pieces {
		assert.LessOrEqual(t, len(p), wire.StreamDeltaBytes)
		assert.True(t, utf8.ValidString(p))
	}
	assert.Nil(t, wire.SplitDelta(""))
	assert.Equal(t, []string{"short"}, wire.SplitDelta("short"))
}

func TestClipTextKeepsWholeCharactersWithinTheBound(t *testing.T) {
	assert.Equal(t, "short", wire.ClipText("short", 5))
	assert.Equal(t, "ab…", wire.ClipText("abcdef", 5))
	// "ä" is 2 bytes: 7 bytes of room less 3 for "…" leave 4, two of them.
	assert.Equal(t, "ää…", wire.ClipText("äääää", 7))
	assert.Equal(t, "ää…", wire.ClipText("äääää", 8), "never half a character")
	for n := 0; n < 20; n++ {
		got := wire.ClipText(strings.Repeat("日本", 10), n)
		assert.True(t, utf8.ValidString(got), "%d: %q", n, got)
		assert.LessOrEqual(t, len(got), max(n, len("…")), "%d: %q", n, got)
	}
}
