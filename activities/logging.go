package activities

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// LogInterceptor is a worker interceptor that gives every line an activity logs
// through activity.GetLogger the chat's keys: chatId and runId (the workflow's id and
// run), and, from the activity's input, agentId and messageId (the user turn it
// answers), when it has them. Lines the workflow logs (workflow.GetLogger) get chatId
// and runId, and messageId and agentId while a turn and an agent's reply run
// (wire.LogTurnKey, wire.LogAgentKey). hosting.NewWorker installs it.
func LogInterceptor() interceptor.WorkerInterceptor { return &logInterceptor{} }

type logInterceptor struct {
	interceptor.WorkerInterceptorBase
}

func (*logInterceptor) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &logInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

type logInbound struct {
	interceptor.ActivityInboundInterceptorBase
}

func (i *logInbound) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	return i.Next.Init(&logOutbound{ActivityOutboundInterceptorBase: interceptor.ActivityOutboundInterceptorBase{Next: outbound}})
}

// logKeysKey carries the activity's log keys through its context.
type logKeysKey struct{}

func (i *logInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	info := activity.GetInfo(ctx)
	keys := []any{"chatId", info.WorkflowExecution.ID, "runId", info.WorkflowExecution.RunID}
	if len(in.Args) > 0 {
		if agent, turn := callOfInput(in.Args[0]); agent != "" || turn != "" {
			keys = append(keys, "agentId", agent, "messageId", turn)
		}
	}
	return i.Next.ExecuteActivity(context.WithValue(ctx, logKeysKey{}, keys), in)
}

type logOutbound struct {
	interceptor.ActivityOutboundInterceptorBase
}

func (o *logOutbound) GetLogger(ctx context.Context) log.Logger {
	l := o.Next.GetLogger(ctx)
	if keys, ok := ctx.Value(logKeysKey{}).([]any); ok {
		return log.With(l, keys...)
	}
	return l
}

// callOfInput is the agent id and turn messageId of an activity's input, when it has them.
func callOfInput(arg any) (agentID, turnID string) {
	switch in := arg.(type) {
	case wire.InvokeInput:
		return in.AgentID, in.TurnID
	case *wire.InvokeInput:
		return in.AgentID, in.TurnID
	case wire.CallToolInput:
		return in.AgentID, in.TurnID
	case wire.SelectInput:
		return in.Agent, in.History.TurnID
	case wire.JudgeInput:
		return in.Agent, in.History.TurnID
	case wire.SummarizeInput:
		return in.Agent, in.History.TurnID
	}
	return "", ""
}

// logCall logs one model call at debug level through the activity's logger (which
// carries the chat's keys, LogInterceptor); nothing outside an activity.
func logCall(ctx context.Context, res wire.InvokeResult, err error) {
	if !activity.IsActivity(ctx) {
		return
	}
	l := activity.GetLogger(ctx)
	if err != nil {
		l.Warn("model call failed", "error", err)
		return
	}
	kv := []any{"model", res.Model}
	if u := res.Usage; u != nil {
		kv = append(kv, "inputTokens", u.InputTokens, "outputTokens", u.OutputTokens, "cachedTokens", u.CachedTokens)
	}
	l.Debug("model call", kv...)
}

func (*logInterceptor) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &logWorkflowInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}}
}

type logWorkflowInbound struct {
	interceptor.WorkflowInboundInterceptorBase
}

func (i *logWorkflowInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&logWorkflowOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}})
}

type logWorkflowOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
}

func (o *logWorkflowOutbound) GetLogger(ctx workflow.Context) log.Logger {
	info := workflow.GetInfo(ctx)
	keys := []any{"chatId", info.WorkflowExecution.ID, "runId", info.WorkflowExecution.RunID}
	if v, ok := ctx.Value(wire.LogTurnKey).(string); ok {
		keys = append(keys, "messageId", v)
	}
	if v, ok := ctx.Value(wire.LogAgentKey).(string); ok {
		keys = append(keys, "agentId", v)
	}
	return log.With(o.Next.GetLogger(ctx), keys...)
}
