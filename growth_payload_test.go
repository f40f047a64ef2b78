package agentchat_test

import (
	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// payloadsIn returns the size of the largest Payloads message anywhere in an event.
func payloadsIn(ev *historypb.HistoryEvent) int64 {
	var largest int64
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if p, ok := m.Interface().(*commonpb.Payloads); ok {
			largest = max(largest, int64(proto.Size(p)))
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := 0; i < v.List().Len(); i++ {
					walk(v.List().Get(i).Message())
				}
			case fd.IsMap() && fd.MapValue().Message() != nil:
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					walk(mv.Message())
					return true
				})
			case fd.Message() != nil && !fd.IsList() && !fd.IsMap():
				walk(v.Message())
			}
			return true
		})
	}
	walk(ev.ProtoReflect())
	return largest
}
