package strategies

import (
	"strings"
	"testing"

	"github.com/agentchat/agentchat/chat"
)

func TestTerminationValidate(t *testing.T) {
	ids := []string{"writer", "reviewer"}
	tests := []struct {
		name    string
		t       TerminationStrategy
		mention string // "" means valid
	}{
		{"zero value", TerminationStrategy{}, ""},
		{"maxIterations", TerminationStrategy{Type: TerminationMaxIterations, MaxIterations: 4}, ""},
		{"regex", TerminationStrategy{Type: TerminationRegex, Pattern: "(?i)approved"}, ""},
		{"regex with agents and cap", TerminationStrategy{Type: TerminationRegex, Pattern: "APPROVED", Agents: []string{"reviewer"}, MaxIterations: 6}, ""},

		{"negative maxIterations", TerminationStrategy{MaxIterations: -1}, "negative"},
		{"negative maxIterations on regex", TerminationStrategy{Type: TerminationRegex, Pattern: "x", MaxIterations: -2}, "negative"},
		{"maxIterations with a pattern", TerminationStrategy{Type: TerminationMaxIterations, Pattern: "x"}, "pattern"},
		{"default type with agents", TerminationStrategy{Agents: []string{"writer"}}, "agents"},
		{"regex without pattern", TerminationStrategy{Type: TerminationRegex}, "needs a pattern"},
		{"regex that does not compile", TerminationStrategy{Type: TerminationRegex, Pattern: "(unclosed"}, "pattern"},
		{"regex with Perl lookahead", TerminationStrategy{Type: TerminationRegex, Pattern: "(?=x)"}, "pattern"},
		{"regex agent not a participant", TerminationStrategy{Type: TerminationRegex, Pattern: "x", Agents: []string{"reviewer", "helper"}}, `"helper"`},
		{"unknown type", TerminationStrategy{Type: "keyword"}, `"keyword"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.t.Validate(ids)
			switch {
			case tt.mention == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.mention != "" && err == nil:
				t.Errorf("Validate = nil, want an error mentioning %s", tt.mention)
			case tt.mention != "" && !strings.Contains(err.Error(), tt.mention):
				t.Errorf("Validate = %q, want it to mention %s", err, tt.mention)
			}
		})
	}
}

func TestTerminationLimit(t *testing.T) {
	tests := []struct {
		t    TerminationStrategy
		n    int
		want int
	}{
		{TerminationStrategy{}, 1, 1},
		{TerminationStrategy{}, 3, 3},
		{TerminationStrategy{Type: TerminationRegex, Pattern: "x"}, 2, 2},
		{TerminationStrategy{MaxIterations: 4}, 2, 4},
		{TerminationStrategy{MaxIterations: 1}, 5, 1},
		{TerminationStrategy{Type: TerminationRegex, Pattern: "x", MaxIterations: 6}, 2, 6},
	}
	for _, tt := range tests {
		if got := tt.t.Limit(tt.n); got != tt.want {
			t.Errorf("%+v.Limit(%d) = %d, want %d", tt.t, tt.n, got, tt.want)
		}
	}
}

func TestTerminationShouldTerminate(t *testing.T) {
	msg := func(agent string, texts ...string) chat.Message {
		m := chat.Message{MessageID: "m/1", Role: chat.RoleAssistant, AgentID: agent}
		for _, s := range texts {
			m.Contents = append(m.Contents, chat.Text(s))
		}
		return m
	}
	approved := TerminationStrategy{Type: TerminationRegex, Pattern: "(?i)\\bapproved\\b"}
	byReviewer := TerminationStrategy{Type: TerminationRegex, Pattern: "APPROVED", Agents: []string{"reviewer"}}
	tests := []struct {
		name string
		t    TerminationStrategy
		m    chat.Message
		want bool
	}{
		{"regex matches", approved, msg("reviewer", "Approved."), true},
		{"regex matches any agent without a filter", approved, msg("writer", "approved"), true},
		{"regex does not match", approved, msg("reviewer", "Make it shorter."), false},
		{"regex matches a later text content", approved, msg("reviewer", "ok", "APPROVED"), true},
		{"regex across joined texts", TerminationStrategy{Type: TerminationRegex, Pattern: "^a\nb$"}, msg("x", "a", "b"), true},
		{"regex ignores non-text contents", approved, chat.Message{AgentID: "reviewer", Contents: []chat.Content{
			{Type: chat.ContentFunctionCall, CallID: "c", Name: "approved", Arguments: `"approved"`}}}, false},
		{"filtered agent matches", byReviewer, msg("reviewer", "APPROVED"), true},
		{"other agent ignored by the filter", byReviewer, msg("writer", "APPROVED"), false},
		{"message without agent ignored by the filter", byReviewer, msg("", "APPROVED"), false},
		{"filter and no match", byReviewer, msg("reviewer", "not yet"), false},
		{"maxIterations never terminates", TerminationStrategy{Type: TerminationMaxIterations, MaxIterations: 1}, msg("reviewer", "APPROVED"), false},
		{"default type never terminates", TerminationStrategy{}, msg("reviewer", "APPROVED"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.t.ShouldTerminate(tt.m); got != tt.want {
				t.Errorf("ShouldTerminate(%q by %q) = %v, want %v", tt.m.Text(), tt.m.AgentID, got, tt.want)
			}
		})
	}
}
