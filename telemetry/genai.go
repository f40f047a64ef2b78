package telemetry

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/semconv/v1.40.0/genaiconv"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
)

// CaptureContentEnv is the GenAI conventions' opt-in for message content in spans:
// "true" puts a model call's input and output messages and a tool call's arguments and
// result into its span. Anything else, or unset, keeps content out.
const CaptureContentEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// CaptureContentFromEnv reports whether CaptureContentEnv is "true" (case-insensitive).
func CaptureContentFromEnv() bool {
	return strings.EqualFold(strings.TrimSpace(os.Getenv(CaptureContentEnv)), "true")
}

// agentchat's own attributes, beside the GenAI conventions' (gen_ai.agent.id and
// gen_ai.conversation.id carry the agent and chat ids).
const (
	// TurnIDKey is the messageId of the user turn a call answers.
	TurnIDKey = attribute.Key("agentchat.turn.id")
	// CostKey is the call's estimated cost at the agent config's prices.
	CostKey = attribute.Key("agentchat.usage.cost")
)

// Recorder records model and tool calls as spans and gen_ai.client.* metrics. The zero
// of its options records nothing (no-op providers). Safe for concurrent use.
type Recorder struct {
	tracer         trace.Tracer
	tokens         genaiconv.ClientTokenUsage
	duration       genaiconv.ClientOperationDuration
	captureContent bool
}

// NewRecorder returns a Recorder on tp and mp (nil means no-op). captureContent puts
// message content into spans (CaptureContentEnv); keep it false when chats are
// encrypted.
func NewRecorder(tp trace.TracerProvider, mp metric.MeterProvider, captureContent bool) (*Recorder, error) {
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	meter := mp.Meter(ScopeName)
	tokens, err := genaiconv.NewClientTokenUsage(meter)
	if err != nil {
		return nil, err
	}
	duration, err := genaiconv.NewClientOperationDuration(meter)
	if err != nil {
		return nil, err
	}
	return &Recorder{tracer: tp.Tracer(ScopeName), tokens: tokens, duration: duration, captureContent: captureContent}, nil
}

// CaptureContent reports whether spans get message content.
func (r *Recorder) CaptureContent() bool { return r.captureContent }

// ModelCall describes one model call: Operation is the conventions' operation
// ("chat" for Chat Completions and Responses, "invoke_agent" for an Assistants run);
// BaseURL the endpoint (server.address and server.port).
type ModelCall struct {
	Operation    string
	RequestModel string
	AgentID      string
	AgentName    string
	ChatID       string
	TurnID       string
	BaseURL      string
	// Input is the request's messages as JSON, recorded only with CaptureContent.
	Input func() string
}

// ModelSpan is a model call in progress; End it once.
type ModelSpan struct {
	r     *Recorder
	span  trace.Span
	start time.Time
	attrs []attribute.KeyValue // the metrics' attributes
	ctx   context.Context
}

// StartModelCall starts the span "<operation> <model>" (span kind client) as a child of
// ctx's span and returns the context for the call, whose HTTP spans are its children.
func (r *Recorder) StartModelCall(ctx context.Context, c ModelCall) (context.Context, *ModelSpan) {
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameKey.String(c.Operation),
		semconv.GenAIProviderNameOpenAI,
		semconv.GenAIRequestModel(c.RequestModel),
	}
	if host, port := hostPort(c.BaseURL); host != "" {
		attrs = append(attrs, semconv.ServerAddress(host))
		if port > 0 {
			attrs = append(attrs, semconv.ServerPort(port))
		}
	}
	spanAttrs := append(attrs[:len(attrs):len(attrs)],
		semconv.GenAIAgentID(c.AgentID), semconv.GenAIAgentName(c.AgentName),
		semconv.GenAIConversationID(c.ChatID), TurnIDKey.String(c.TurnID))
	if r.captureContent && c.Input != nil {
		spanAttrs = append(spanAttrs, semconv.GenAIInputMessagesKey.String(c.Input()))
	}
	ctx, span := r.tracer.Start(ctx, c.Operation+" "+c.RequestModel,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(spanAttrs...))
	return ctx, &ModelSpan{r: r, span: span, start: time.Now(), attrs: attrs, ctx: ctx}
}

// ModelResult is what a model call answered.
type ModelResult struct {
	ResponseModel string
	Usage         *chat.Usage
	Cost          float64
	// FinishReasons are the choices' finish reasons ("stop", "tool_calls", "length").
	FinishReasons []string
	// Output is the reply as JSON, recorded only with CaptureContent.
	Output func() string
}

// End ends the span with res (or err, as error.type: a Temporal application error's
// type, else the Go type) and records the duration and the token usage.
func (s *ModelSpan) End(res ModelResult, err error) {
	attrs := s.attrs
	if res.ResponseModel != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(res.ResponseModel))
	}
	span := []attribute.KeyValue{}
	if res.ResponseModel != "" {
		span = append(span, semconv.GenAIResponseModel(res.ResponseModel))
	}
	if len(res.FinishReasons) > 0 {
		span = append(span, semconv.GenAIResponseFinishReasons(res.FinishReasons...))
	}
	if u := res.Usage; u != nil {
		span = append(span, semconv.GenAIUsageInputTokens(u.InputTokens), semconv.GenAIUsageOutputTokens(u.OutputTokens))
		if u.CachedTokens > 0 {
			span = append(span, semconv.GenAIUsageCacheReadInputTokens(u.CachedTokens))
		}
		if res.Cost > 0 {
			span = append(span, CostKey.Float64(res.Cost))
		}
	}
	if s.r.captureContent && res.Output != nil && err == nil {
		span = append(span, semconv.GenAIOutputMessagesKey.String(res.Output()))
	}
	if err != nil {
		et := ErrorType(err)
		attrs = append(attrs, semconv.ErrorTypeKey.String(et))
		span = append(span, semconv.ErrorTypeKey.String(et))
		s.span.SetStatus(codes.Error, err.Error())
	}
	s.span.SetAttributes(span...)
	s.span.End()
	set := metric.WithAttributes(attrs...)
	s.r.duration.Inst().Record(s.ctx, time.Since(s.start).Seconds(), set)
	if u := res.Usage; u != nil && err == nil {
		s.r.tokens.Inst().Record(s.ctx, int64(u.InputTokens), set, metric.WithAttributes(semconv.GenAITokenTypeInput))
		s.r.tokens.Inst().Record(s.ctx, int64(u.OutputTokens), set, metric.WithAttributes(semconv.GenAITokenTypeOutput))
	}
}

// ToolCall describes one tool call.
type ToolCall struct {
	Name      string
	CallID    string
	AgentID   string
	ChatID    string
	TurnID    string
	Arguments string // recorded only with CaptureContent
}

// ToolSpan is a tool call in progress; End it once.
type ToolSpan struct {
	r    *Recorder
	span trace.Span
}

// StartToolCall starts the span "execute_tool <name>" (span kind internal).
func (r *Recorder) StartToolCall(ctx context.Context, c ToolCall) (context.Context, *ToolSpan) {
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(c.Name), semconv.GenAIToolCallID(c.CallID),
		semconv.GenAIToolTypeKey.String("function"), semconv.GenAIAgentID(c.AgentID), semconv.GenAIConversationID(c.ChatID),
		TurnIDKey.String(c.TurnID),
	}
	if r.captureContent {
		attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(c.Arguments))
	}
	ctx, span := r.tracer.Start(ctx, "execute_tool "+c.Name, trace.WithAttributes(attrs...))
	return ctx, &ToolSpan{r: r, span: span}
}

// End ends the span with the tool's result (or err, as error.type); toolErr is the
// error the tool answered the model with, which fails the span too.
func (s *ToolSpan) End(result, toolErr string, err error) {
	if s.r.captureContent && err == nil {
		s.span.SetAttributes(semconv.GenAIToolCallResultKey.String(result))
	}
	switch {
	case err != nil:
		s.span.SetAttributes(semconv.ErrorTypeKey.String(ErrorType(err)))
		s.span.SetStatus(codes.Error, err.Error())
	case toolErr != "":
		s.span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		s.span.SetStatus(codes.Error, toolErr)
	}
	s.span.End()
}

// ErrorType is err's error.type: a Temporal application error's type (wire.ErrType…),
// "timeout" for a deadline, "canceled" for a cancellation, else "_OTHER".
func ErrorType(err error) string {
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &app) && app.Type() != "":
		return app.Type()
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "_OTHER"
}

// hostPort is the host and port of base ("" when it is not a URL), the port defaulted
// from the scheme.
func hostPort(base string) (string, int) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", 0
	}
	port, _ := strconv.Atoi(u.Port())
	if port == 0 {
		switch u.Scheme {
		case "https":
			port = 443
		case "http":
			port = 80
		}
	}
	return u.Hostname(), port
}
