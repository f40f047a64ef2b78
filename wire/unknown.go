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
	// registered on the worker (activities.Config.Functions: Tools, Selectors and Judges;
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
	var unknown, workers, known []string
	kind := KindAgent
	for _, w := range slices.Sorted(maps.Keys(answers)) {
		d := answers[w]
		if d.Kind != "" {
			kind = d.Kind
		}
		known = append(known, d.Known...)
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
	over := "" // a wait under a second is no news
	if waited >= time.Second {
		over = " over " + waited.Round(time.Second).String()
	}
	asked := fmt.Sprintf("asked %d worker(s)%s: %s", len(answers), over, strings.Join(workers, "; "))
	if kind == KindAgent {
		return fmt.Sprintf("unknown agent id(s) %s%s: no worker of the task queue knows them (%s); "+
			"deploy an agent config that defines them, or start the chat with agents that exist",
			QuotedList(unknown), DidYouMean(unknown, known), asked)
	}
	return fmt.Sprintf("%s(s) %s%s: no worker of the task queue has them (%s); "+
		"deploy workers that register them (activities.Config.Functions: Tools, Selectors, Judges)",
		kind, QuotedList(unknown), DidYouMean(unknown, known), asked)
}

// DidYouMean is ` (did you mean "x"?)` naming, for each of unknown, the closest of known
// by edit distance (editDistance, case-insensitive: a swap of two letters is one edit)
// when it is within a third of the name's length (at least 1 edit), as cobra suggests
// commands; "" when none is close.
func DidYouMean(unknown, known []string) string {
	var close []string
	for _, u := range unknown {
		best, bestD := "", max(1, len(u)/3)+1
		for _, k := range known {
			if d := editDistance(strings.ToLower(u), strings.ToLower(k)); d < bestD && k != u {
				best, bestD = k, d
			}
		}
		if best != "" && !slices.Contains(close, best) {
			close = append(close, best)
		}
	}
	if len(close) == 0 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", strings.Join(quoteEach(close), " or "))
}

func quoteEach(s []string) []string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return q
}

// editDistance is the edit distance of a and b, in bytes: insertions, deletions,
// substitutions and swaps of two adjacent bytes (optimal string alignment).
func editDistance(a, b string) int {
	// Optimal string alignment: Levenshtein plus the swap of two adjacent bytes as one
	// edit ("caht" is one edit from "chat"), the commonest typo.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
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
