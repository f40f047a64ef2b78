package wire

import (
	"encoding/base64"
	"fmt"
	"time"
	"unicode/utf8"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// A chat's live events follow Temporal's Workflow Streams protocol (the cross-language
// protocol of temporalio/sdk-go contrib/workflowstreams and of the npm package
// @temporalio/workflow-streams, whose README and lib/types.d.ts this follows): an
// offset-addressed log in the workflow, appended to by a signal, read by a long-poll
// update, its end told by a query. Temporal's own stream clients in any language follow a
// chat with no agentchat code: subscribe to topic StreamTopic and decode each item's data
// (a JSON payload) as a StreamEvent.
const (
	// StreamPublishSignal appends a batch of entries to the log (StreamPublishInput).
	StreamPublishSignal = "__temporal_workflow_stream_publish"
	// StreamPollUpdate waits until the log holds items at or after fromOffset and returns
	// them (StreamPollInput → StreamPollResult).
	StreamPollUpdate = "__temporal_workflow_stream_poll"
	// StreamOffsetQuery returns the log's next offset: one past its last item (→ int).
	StreamOffsetQuery = "__temporal_workflow_stream_offset"
	// StreamReadQuery returns the log's items from an offset at once, as a poll that
	// does not wait (StreamPollInput → StreamReadResult): agentchat's own, not the
	// protocol's, for a closed chat, whose workflow answers queries but no update.
	StreamReadQuery = "StreamRead"
	// StreamFollowersQuery is agentchat's own query, beside the protocol's: whether
	// anyone follows the chat's stream now (no input → StreamFollowers). The model
	// call's activity asks it to publish text deltas only while someone does; it writes
	// no history.
	StreamFollowersQuery = "StreamFollowers"
	// StreamTopic is the topic of every chat event (StreamEvent). Entries published on
	// other topics are ignored: a chat's log holds its own events only.
	StreamTopic = "agentchat"

	// ErrTypeTruncatedOffset: a poll asked for an offset before the log's base (dropped
	// at a continue-as-new); poll again from 0, which reads from the base. The protocol's
	// own error type.
	ErrTypeTruncatedOffset = "TruncatedOffset"
	// ErrTypeStreamDraining: the run is handing over (continue-as-new) or ending and
	// takes no more polls; poll again after a short pause (the next run answers). The
	// protocol's own error type.
	ErrTypeStreamDraining = "StreamDraining"
)

// StreamPublishInput is the signal's payload: entries to append, deduplicated by
// publisher and sequence (a publisher's batch with a sequence not above its last one is
// dropped). The protocol's field names are snake_case.
type StreamPublishInput struct {
	Items       []StreamEntry `json:"items"`
	PublisherID string        `json:"publisher_id"`
	Sequence    int64         `json:"sequence"`
}

// StreamEntry is one entry published: Data is the standard base64 (padded) of a
// serialized temporal.api.common.v1.Payload.
type StreamEntry struct {
	Topic string `json:"topic"`
	Data  string `json:"data"`
}

// StreamPollInput is the poll update's input: the topics to read (empty: all) and the
// first offset wanted (0: from the log's base, whatever it is).
type StreamPollInput struct {
	Topics     []string `json:"topics"`
	FromOffset int64    `json:"from_offset"`
}

// StreamPollResult is the poll update's result: the items at or after the offset
// asked for, NextOffset the offset to poll from next, MoreReady true when the result was
// cut at StreamPollBytes and more items wait (poll again at once).
type StreamPollResult struct {
	Items      []StreamItem `json:"items"`
	NextOffset int64        `json:"next_offset"`
	MoreReady  bool         `json:"more_ready"`
}

// StreamReadResult is the StreamRead query's result: the poll's fields, items from
// the offset asked for (one before the log's base reads from the base), and, once the
// chat has migrated, where it went: its stream goes on in the target chat's.
type StreamReadResult struct {
	StreamPollResult
	MigratedTo *ChatLocation `json:"migratedTo,omitempty"`
}

// StreamItem is one item of the log: Data as in StreamEntry, Offset its place in the
// log. Offsets increase; after a continue-as-new dropped the text deltas of finished
// messages, they need not be consecutive.
type StreamItem struct {
	Topic  string `json:"topic"`
	Data   string `json:"data"`
	Offset int64  `json:"offset"`
}

// StreamFollowers is the answer of StreamFollowersQuery: Waiting, the poll updates
// that wait in the run now; Followed, whether a subscriber follows: one waits, or a
// poll was answered at most StreamFollowGrace (by the workflow's clock) before the
// run's latest workflow task, so a subscriber between two polls counts; or a
// CancelTurn waits for the text a model call held back, to keep it as the partial
// reply.
type StreamFollowers struct {
	Waiting  int  `json:"waiting"`
	Followed bool `json:"followed"`
}

// StreamFollowGrace is how long after its last poll was answered a subscriber still
// counts as following: 1 s, far more than a subscriber takes to poll again.
const StreamFollowGrace = time.Second

// StreamPollBytes bounds a poll result's items (base64 and topic lengths), as the
// protocol's own workflow side does (1,000,000): a result always holds at least one.
const StreamPollBytes = 1_000_000

// StreamDeltaBytes is the most text one textDelta carries, in bytes: 32 KiB, so that
// every publication and event stays far under a payload (a longer text is split, at a
// rune boundary).
const StreamDeltaBytes = 32 << 10

// StreamReplyBytes is the most text of one attempt at a reply that its model call
// publishes: 256 KiB. A longer reply's text comes whole with its messageDone (one
// over ReplyInlineLimit, which goes to the message store, as a reference: History has
// its text).
const StreamReplyBytes = 256 << 10

// SplitDelta cuts text into pieces of at most StreamDeltaBytes, at rune boundaries.
func SplitDelta(text string) []string {
	var out []string
	for len(text) > StreamDeltaBytes {
		cut := StreamDeltaBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}

// StreamCarry is the log a run hands the next at continue-as-new: the events of the
// latest turns without their text deltas, within StreamCarryBytes, and the log's next
// offset, so offsets go on where they stopped.
type StreamCarry struct {
	Items      []StreamItem `json:"items,omitempty"`
	NextOffset int64        `json:"nextOffset"`
}

// StreamCarryBytes bounds the items a StreamCarry holds (their base64 data): 64 KiB,
// a small part of CarryLimit.
const StreamCarryBytes = 64 << 10

// EncodeStreamData returns v as the protocol's item data: the base64 of the serialized
// Payload that Temporal's default data converter makes of v (JSON, "json/plain").
func EncodeStreamData(v any) (string, error) {
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		return "", fmt.Errorf("stream item: %w", err)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("stream item: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// DecodeStreamData decodes an item's data (EncodeStreamData) into out.
//
// Errors: data that is not base64, not a serialized Payload, or whose payload the
// default data converter cannot decode into out.
func DecodeStreamData(data string, out any) error {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return fmt.Errorf("stream item: not base64: %w", err)
	}
	var p commonpb.Payload
	if err := proto.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("stream item: not a Payload: %w", err)
	}
	if err := converter.GetDefaultDataConverter().FromPayload(&p, out); err != nil {
		return fmt.Errorf("stream item: %w", err)
	}
	return nil
}

// EncodedStreamEvent returns ev as item data; an event always encodes (it is plain JSON).
func EncodedStreamEvent(ev StreamEvent) string {
	s, _ := EncodeStreamData(ev) // cannot fail: a StreamEvent is plain JSON
	return s
}
