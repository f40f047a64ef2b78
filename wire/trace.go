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
