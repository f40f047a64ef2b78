package workflows

import (
	"errors"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// Pacing of the tries on other workers: the first after unknownAgentFirstDelay,
// doubling up to unknownAgentMaxDelay, within the wait the worker names.
const (
	unknownAgentFirstDelay = 200 * time.Millisecond
	unknownAgentMaxDelay   = 2 * time.Second
)

// agentActivity runs activity name (with the activity options in ctx) that needs agents
// of the worker's registry or its registered functions: resolving participants, a
// model call, a strategy's call. See tryElsewhere.
func (s *chatState) agentActivity(ctx workflow.Context, name string, in, out any) error {
	err := s.getPublishing(ctx, workflow.ExecuteActivity(ctx, name, in), out)
	return s.tryElsewhere(ctx, name, in, out, err)
}

// tryElsewhere takes err, the outcome of activity name run once with input in (and
// the activity options in ctx). When the worker that ran it does not know an agent or
// lacks a Go function (UnknownAgent, UnknownFunction: during a rolling deploy that
// adds, renames or removes one, some workers have the new config and some the old),
// it runs the activity again through the task queue, never eagerly on this worker,
// with backoff, until a worker answers or no worker can: every worker that the server
// lists as polling the queue has said it lacks it, or the wait the worker names
// (wire.UnknownAgentDetails.Wait) has passed since the first answer. Then the error
// is of the answers' type and names each worker asked and what it has. Any other err
// is returned as it is.
func (s *chatState) tryElsewhere(ctx workflow.Context, name string, in, out any, err error) error {
	d, errType, ok := unknownDetails(err)
	if !ok {
		return err
	}
	opts := workflow.GetActivityOptions(ctx)
	opts.DisableEagerExecution = true
	elsewhere := workflow.WithActivityOptions(ctx, opts)
	began := workflow.Now(ctx)
	answers := map[string]wire.UnknownAgentDetails{}
	delay := unknownAgentFirstDelay
	for {
		answers[d.Worker] = d
		waited := workflow.Now(ctx).Sub(began)
		if everyPollerAnswered(d.Pollers, answers) || waited >= time.Duration(d.Wait) {
			workflow.GetLogger(ctx).Warn("no worker has the agent or function", "activity", name, "waited", waited)
			return temporal.NewNonRetryableApplicationError(wire.UnknownEverywhere(answers, waited),
				errType, nil, answers)
		}
		if err := workflow.Sleep(ctx, min(delay, time.Duration(d.Wait)-waited)); err != nil {
			return err
		}
		delay = min(2*delay, unknownAgentMaxDelay)
		err = s.getPublishing(ctx, workflow.ExecuteActivity(elsewhere, name, in), out)
		if d, _, ok = unknownDetails(err); !ok {
			return err
		}
	}
}

// unknownDetails reports whether err is an activity's UnknownAgent or UnknownFunction
// answer, with its details and type. An answer without details (a worker of an older
// version) names no worker and the default wait.
func unknownDetails(err error) (wire.UnknownAgentDetails, string, bool) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || (app.Type() != wire.ErrTypeUnknownAgent && app.Type() != wire.ErrTypeUnknownFunction) {
		return wire.UnknownAgentDetails{}, "", false
	}
	var d wire.UnknownAgentDetails
	if !app.HasDetails() || app.Details(&d) != nil || d.Worker == "" {
		d = wire.UnknownAgentDetails{Worker: "(unnamed: " + app.Message() + ")"}
	}
	if d.Wait <= 0 {
		d.Wait = wire.Duration(wire.DefaultUnknownAgentWait)
	}
	return d, app.Type(), true
}

// everyPollerAnswered reports whether every worker polling the queue (as the last
// answer listed them) has answered; false when the pollers are not known. A poller
// is matched by its identity, whatever it is (wire.UnknownAgentDetails.Worker is
// the identity the worker polls with); an answer in Temporal's default form
// "<pid>@<host>@" also matches pollers it begins, as it always did.
func everyPollerAnswered(pollers []string, answers map[string]wire.UnknownAgentDetails) bool {
	if len(pollers) == 0 {
		return false
	}
	for _, p := range pollers {
		found := false
		for w := range answers {
			if p == w || (strings.HasSuffix(w, "@") && strings.HasPrefix(p, w)) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
