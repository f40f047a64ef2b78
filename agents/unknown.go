package agents

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

// UnknownAgentDetails are the details of an UnknownAgent error that an activity
// returns: which worker did not know which agents, what it knows, and who else polls
// the task queue. The workflow runs the call again on other workers until each poller
// has answered, or Wait has passed.
type UnknownAgentDetails struct {
	// Worker is the identity of the worker that answered ("<pid>@<host>@", Temporal's
	// default worker identity).
	Worker string `json:"worker"`
	// Unknown are the agent ids it does not know; Known, every id it knows, sorted.
	Unknown []string `json:"unknown"`
	Known   []string `json:"known"`
	// Pollers are the identities of the workers that polled the activity task queue in
	// the last minutes, as the server reports them; empty when the worker could not ask.
	Pollers []string `json:"pollers,omitempty"`
	// Wait is how long, from the first such answer, the chat tries other workers.
	Wait Duration `json:"wait"`
}

// UnknownEverywhere describes the answers of several workers (by identity) that did
// not know an agent, for the error a chat ends its wait with.
func UnknownEverywhere(answers map[string]UnknownAgentDetails, waited time.Duration) string {
	var unknown []string
	var workers []string
	for _, w := range slices.Sorted(maps.Keys(answers)) {
		d := answers[w]
		for _, id := range d.Unknown {
			if !slices.Contains(unknown, id) {
				unknown = append(unknown, id)
			}
		}
		workers = append(workers, fmt.Sprintf("worker %s knows %s", w, orNone(d.Known)))
	}
	if len(unknown) == 0 {
		unknown = []string{"(not named)"}
	}
	return fmt.Sprintf("unknown agent id(s) %s: no worker of the task queue knows them (asked %d worker(s) over %s: %s); "+
		"deploy an agent config that defines them, or start the chat with agents that exist",
		quoteList(unknown), len(answers), waited.Round(time.Millisecond), strings.Join(workers, "; "))
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "no agents"
	}
	return quoteList(ids)
}
