package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/strategies"
)

// strategyHelp explains the strategy flags in the long help of start, import and send.
const strategyHelp = `Strategies (group chats):
  selection, who speaks next:
    --selection sequential   in order, round robin across turns (default)
    --selection llm          --selector AGENT is asked who speaks next; the agent is
                             an id of the worker's registry and need not be a participant
    --selection function     --selection-function NAME, a Go function registered on
                             the worker (activities.Config.Functions.Selectors)
    --fallback sequential|error  when llm or function names no participant: take the
                             next in order (default), or fail the turn
  termination, when agents stop (every strategy caps a turn at --max-iterations replies):
    --termination maxIterations  only the cap (default)
    --termination regex      the chat completes when a message matches --pattern
    --termination llm        --judge AGENT is asked whether the goal is reached (yes/no)
    --termination function   --termination-function NAME, a Go function on the worker
                             (activities.Config.Functions.Judges)
    --termination-agents     with regex, llm or function: only these agents' messages count
    --auto-reset             a completed chat stays open; the next user turn starts afresh
  The "any" and "all" combinations of termination strategies are Go/wire-only
  (agentchat.TerminationStrategy{Type: "any", Strategies: ...}); the command line sets one.
  A type-specific flag implies its type: --selector means --selection llm, --judge
  means --termination llm, --pattern means --termination regex.`

// strategyFlags are the selection and termination flags of start, import and send.
type strategyFlags struct {
	initialAgent      string
	selection         string
	selector          string
	selectionFunction string
	fallback          string

	termination         string
	maxIterations       int
	pattern             string
	terminationAgents   []string
	judge               string
	terminationFunction string
	autoReset           bool
}

// strategyFlagNames are the flags strategyFlags adds, for commands that refuse them.
var strategyFlagNames = []string{"initial-agent", "selection", "selector", "selection-function", "fallback",
	"termination", "max-iterations", "pattern", "termination-agents", "judge", "termination-function", "auto-reset"}

func (f *strategyFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.initialAgent, "initial-agent", "", "agent that speaks first (sequential selection continues from it)")
	fl.StringVar(&f.selection, "selection", "", `selection strategy: "sequential" (default), "llm" (with --selector) or "function" (with --selection-function)`)
	fl.StringVar(&f.selector, "selector", "", "with --selection llm: the agent asked who speaks next (any agent of the worker's registry)")
	fl.StringVar(&f.selectionFunction, "selection-function", "", "with --selection function: the selection function registered on the worker")
	fl.StringVar(&f.fallback, "fallback", "", `with --selection llm or function, when it names no participant: "sequential" (default: the next in order) or "error" (fail the turn)`)
	fl.StringVar(&f.termination, "termination", "", `termination strategy: "maxIterations" (default), "regex" (with --pattern), "llm" (with --judge) or "function" (with --termination-function); "any"/"all" are Go/wire-only`)
	fl.IntVar(&f.maxIterations, "max-iterations", 0, "most agent replies per user turn (default: one per participant)")
	fl.StringVar(&f.pattern, "pattern", "", `with --termination regex: the chat completes when an agent's message matches (RE2 syntax)`)
	fl.StringSliceVar(&f.terminationAgents, "termination-agents", nil, "with --termination regex, llm or function: only these agents' messages are tested")
	fl.StringVar(&f.judge, "judge", "", "with --termination llm: the agent asked whether the chat has reached its goal (any agent of the worker's registry)")
	fl.StringVar(&f.terminationFunction, "termination-function", "", "with --termination function: the termination function registered on the worker")
	fl.BoolVar(&f.autoReset, "auto-reset", false, "keep a completed chat open: the next user turn resets the termination strategy")
}

// strategies builds the strategies the flags describe. A flag of one strategy type
// implies that type when the type is not given, and is refused with another type.
// The agentchat client validates the rest (participants, patterns) before sending.
func (f *strategyFlags) strategies() (agentchat.SelectionStrategy, agentchat.TerminationStrategy, error) {
	selType, err := strategyType("selection", f.selection, []typedFlag{
		{"selector", strategies.SelectionLLM, f.selector != ""},
		{"selection-function", strategies.SelectionFunction, f.selectionFunction != ""},
	})
	if err != nil {
		return agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{}, err
	}
	if f.fallback != "" && selType != strategies.SelectionLLM && selType != strategies.SelectionFunction {
		return agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{}, fmt.Errorf(
			"--fallback applies to --selection %s or %s", strategies.SelectionLLM, strategies.SelectionFunction)
	}
	if selType == "" {
		selType = strategies.SelectionSequential
	}
	if err := needs("selection", selType, map[string]flagNeed{
		strategies.SelectionLLM:      {"selector", "AGENT", f.selector},
		strategies.SelectionFunction: {"selection-function", "NAME", f.selectionFunction},
	}); err != nil {
		return agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{}, err
	}
	sel := agentchat.SelectionStrategy{Type: selType, InitialAgent: f.initialAgent, Agent: f.selector,
		Function: f.selectionFunction, Fallback: f.fallback}

	if f.termination == strategies.TerminationAny || f.termination == strategies.TerminationAll {
		return sel, agentchat.TerminationStrategy{}, fmt.Errorf(
			"--termination %s combines strategies and is Go/wire-only (agentchat.TerminationStrategy{Type: %q, Strategies: ...}); the command line sets one strategy",
			f.termination, f.termination)
	}
	termType, err := strategyType("termination", f.termination, []typedFlag{
		{"pattern", strategies.TerminationRegex, f.pattern != ""},
		{"judge", strategies.TerminationLLM, f.judge != ""},
		{"termination-function", strategies.TerminationFunction, f.terminationFunction != ""},
	})
	if err != nil {
		return sel, agentchat.TerminationStrategy{}, err
	}
	if err := needs("termination", termType, map[string]flagNeed{
		strategies.TerminationLLM:      {"judge", "AGENT", f.judge},
		strategies.TerminationRegex:    {"pattern", "REGEX", f.pattern},
		strategies.TerminationFunction: {"termination-function", "NAME", f.terminationFunction},
	}); err != nil {
		return sel, agentchat.TerminationStrategy{}, err
	}
	if len(f.terminationAgents) > 0 && (termType == "" || termType == strategies.TerminationMaxIterations) {
		return sel, agentchat.TerminationStrategy{}, fmt.Errorf("--termination-agents applies to --termination %s, %s or %s",
			strategies.TerminationRegex, strategies.TerminationLLM, strategies.TerminationFunction)
	}
	term := agentchat.TerminationStrategy{Type: termType, MaxIterations: f.maxIterations, Pattern: f.pattern,
		Agents: f.terminationAgents, Agent: f.judge, Function: f.terminationFunction, AutoReset: f.autoReset}
	return sel, term, nil
}

// flagNeed is the flag a strategy type needs: its name, its value's placeholder for
// the error, and its value ("" when not given).
type flagNeed struct{ name, placeholder, value string }

// needs returns an error naming the flag that strategy type typ of kind ("selection")
// needs when it is not given (per type in need).
func needs(kind, typ string, need map[string]flagNeed) error {
	n, ok := need[typ]
	if !ok || n.value != "" {
		return nil
	}
	return fmt.Errorf("--%s %s needs --%s %s", kind, typ, n.name, n.placeholder)
}

// typedFlag is a flag that belongs to one strategy type.
type typedFlag struct {
	name, typ string
	set       bool
}

// strategyType returns the strategy type given, or else the one the set flags imply
// ("" when none); a set flag of another type is an error.
func strategyType(kind, given string, flags []typedFlag) (string, error) {
	typ, from := given, ""
	for _, f := range flags {
		switch {
		case !f.set || f.typ == typ:
		case typ == "":
			typ, from = f.typ, f.name
		case from == "":
			return "", fmt.Errorf("--%s applies to --%s %s, not %s", f.name, kind, f.typ, given)
		default:
			return "", fmt.Errorf("--%s (--%s %s) and --%s (--%s %s) ask for different %s strategies; a chat has one",
				from, kind, typ, f.name, kind, f.typ, kind)
		}
	}
	return typ, nil
}
