package wire

// traceSpanKey is the type of TraceSpanKey.
type traceSpanKey struct{}

// TraceSpanKey is the workflow.Context key under which Temporal's tracing interceptor
// keeps a workflow's current span (interceptor.TracerOptions.SpanContextKey; package
// telemetry sets it). The workflow reads it in the SendMessage and UserMessage handlers
// and runs the turn under it, so that a turn's activities are children of the update
// that asked for it, not of the run. It is a context value only: no command depends on
// it.
var TraceSpanKey any = traceSpanKey{}

// logKey is the type of the workflow.Context keys of the chat's log keys.
type logKey string

// LogTurnKey and LogAgentKey are workflow.Context keys under which the workflow keeps
// the messageId of the turn it is answering and the id of the agent replying, for the
// worker's workflow logger (activities.LogInterceptor adds them to every line). Context
// values only: no command depends on them.
var (
	LogTurnKey  any = logKey("messageId")
	LogAgentKey any = logKey("agentId")
)
