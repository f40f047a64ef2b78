package wire

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// DefaultUnknownAgentWait is how long a chat keeps trying other workers of its task
// queue for an agent that the worker it reached does not know, when the worker does
// not say (activities.Config.UnknownAgentWait). It covers a rolling deploy that adds
// or removes an agent: for a few minutes, some workers have the new config and some
// the old.
const DefaultUnknownAgentWait = 2 * time.Minute

// Kinds of what a worker may lack (UnknownAgentDetails.Kind).
const (
	// KindAgent: an agent id of the registry (UnknownAgent errors).
	KindAgent = "agent"
	// KindTool, KindSelectionFunction and KindTerminationFunction: a Go function
	// registered on the worker (activities.Config Tools, Selectors and Judges;
	// UnknownFunction errors).
	KindTool                = "tool function"
	KindSelectionFunction   = "selection function"
	KindTerminationFunction = "termination function"
)

// UnknownAgentDetails are the details of an UnknownAgent or UnknownFunction error that
// an activity returns: which worker lacked which agents or functions, what it has, and
// who else polls the task queue. The workflow runs the call again on other workers
// until each poller has answered, or Wait has passed.
type UnknownAgentDetails struct {
	// Worker is the identity of the worker that answered, as the server lists it
	// among the pollers (Temporal's default is "<pid>@<host>@"; a worker can be given
	// another, activities.Config.WorkerIdentity).
	Worker string `json:"worker"`
	// Kind is what was missing: KindAgent (also when empty: answers of workers before
	// functions were retried) or one of the function kinds.
	Kind string `json:"kind,omitempty"`
	// Unknown are the agent ids (function names) it lacks; Known, every one of that
	// kind it has, sorted.
	Unknown []string `json:"unknown"`
	Known   []string `json:"known"`
	// Pollers are the identities of the workers that polled the activity task queue in
	// the last minutes, as the server reports them; empty when the worker could not ask.
	Pollers []string `json:"pollers,omitempty"`
	// Wait is how long, from the first such answer, the chat tries other workers.
	Wait Duration `json:"wait"`
}

// UnknownEverywhere describes the answers of several workers (by identity) that
// lacked an agent or a function, for the error a chat ends its wait with.
func UnknownEverywhere(answers map[string]UnknownAgentDetails, waited time.Duration) string {
	var unknown, workers []string
	kind := KindAgent
	for _, w := range slices.Sorted(maps.Keys(answers)) {
		d := answers[w]
		if d.Kind != "" {
			kind = d.Kind
		}
		for _, id := range d.Unknown {
			if !slices.Contains(unknown, id) {
				unknown = append(unknown, id)
			}
		}
		if kind == KindAgent {
			workers = append(workers, fmt.Sprintf("worker %s knows %s", w, orNone(d.Known)))
		} else {
			workers = append(workers, fmt.Sprintf("worker %s has %s", w, hasNone(d.Known)))
		}
	}
	if len(unknown) == 0 {
		unknown = []string{"(not named)"}
	}
	asked := fmt.Sprintf("asked %d worker(s) over %s: %s", len(answers), waited.Round(time.Millisecond), strings.Join(workers, "; "))
	if kind == KindAgent {
		return fmt.Sprintf("unknown agent id(s) %s: no worker of the task queue knows them (%s); "+
			"deploy an agent config that defines them, or start the chat with agents that exist", QuotedList(unknown), asked)
	}
	return fmt.Sprintf("%s(s) %s: no worker of the task queue has them (%s); "+
		"deploy workers that register them (activities.Config Tools, Selectors, Judges)", kind, QuotedList(unknown), asked)
}

func hasNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return QuotedList(names)
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "no agents"
	}
	return QuotedList(ids)
}

// QuotedList is ids quoted and comma-separated, as error messages name them.
func QuotedList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}
