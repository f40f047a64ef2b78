package integration_test

import (
	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agentchat/agentchat/internal/testenv"
)

// payloadsIn returns the size of the largest Payloads message anywhere in an event.
func payloadsIn(ev *historypb.HistoryEvent) int64 {
	var largest int64
	testenv.WalkMessages(ev.ProtoReflect(), func(m protoreflect.Message) bool {
		if p, ok := m.Interface().(*commonpb.Payloads); ok {
			largest = max(largest, int64(proto.Size(p)))
			return false
		}
		return true
	})
	return largest
}
