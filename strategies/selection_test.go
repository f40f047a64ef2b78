package strategies

import (
	"reflect"
	"strings"
	"testing"
)

func TestSelectionValidate(t *testing.T) {
	ids := []string{"writer", "reviewer"}
	tests := []struct {
		name    string
		s       SelectionStrategy
		mention string // "" means valid
	}{
		{"zero value", SelectionStrategy{}, ""},
		{"sequential", SelectionStrategy{Type: SelectionSequential}, ""},
		{"initial agent", SelectionStrategy{Type: SelectionSequential, InitialAgent: "reviewer"}, ""},
		{"initial agent with default type", SelectionStrategy{InitialAgent: "writer"}, ""},
		{"unknown type", SelectionStrategy{Type: "roundRobin"}, `"roundRobin"`},
		{"type is case-sensitive", SelectionStrategy{Type: "Sequential"}, `"Sequential"`},
		{"initial agent not a participant", SelectionStrategy{InitialAgent: "helper"}, `"helper"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Validate(ids)
			switch {
			case tt.mention == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.mention != "" && err == nil:
				t.Errorf("Validate = nil, want an error naming %s", tt.mention)
			case tt.mention != "" && !strings.Contains(err.Error(), tt.mention):
				t.Errorf("Validate = %q, want it to name %s", err, tt.mention)
			}
		})
	}
}

func TestSelectionInitial(t *testing.T) {
	ids := []string{"a", "b", "c"}
	tests := []struct {
		initial string
		want    int
	}{
		{"", 0}, {"a", 0}, {"b", 1}, {"c", 2}, {"missing", 0},
	}
	for _, tt := range tests {
		got := SelectionStrategy{InitialAgent: tt.initial}.Initial(ids)
		if got != (SelectionState{NextIndex: tt.want}) {
			t.Errorf("Initial with initialAgent %q = %+v, want nextIndex %d", tt.initial, got, tt.want)
		}
	}
}

func TestSelectionNext(t *testing.T) {
	ids := []string{"a", "b", "c"}
	tests := []struct {
		name      string
		s         SelectionStrategy
		ids       []string
		start     *SelectionState // nil: s.Initial(ids)
		want      []string
		wantAfter int
	}{
		{"round robin wraps", SelectionStrategy{}, ids, nil, []string{"a", "b", "c", "a", "b", "c", "a"}, 1},
		{"from the initial agent", SelectionStrategy{InitialAgent: "b"}, ids, nil, []string{"b", "c", "a", "b"}, 2},
		{"initial agent last", SelectionStrategy{InitialAgent: "c"}, ids, nil, []string{"c", "a"}, 1},
		{"one participant", SelectionStrategy{}, []string{"solo"}, nil, []string{"solo", "solo", "solo"}, 0},
		{"restored state", SelectionStrategy{}, ids, &SelectionState{NextIndex: 2}, []string{"c", "a"}, 1},
		{"index past the end wraps", SelectionStrategy{}, ids, &SelectionState{NextIndex: 10}, []string{"b", "c"}, 0},
		{"negative index", SelectionStrategy{}, ids, &SelectionState{NextIndex: -1}, []string{"c", "a", "b"}, 2},
		{"large negative index", SelectionStrategy{}, ids, &SelectionState{NextIndex: -7}, []string{"c", "a"}, 1},
		{"negative multiple of n", SelectionStrategy{}, ids, &SelectionState{NextIndex: -6}, []string{"a"}, 1},
		{"fewer participants after restore", SelectionStrategy{}, []string{"a", "b"}, &SelectionState{NextIndex: 2}, []string{"a", "b"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st SelectionState
			if tt.start != nil {
				st = *tt.start
			} else {
				st = tt.s.Initial(tt.ids)
			}
			var got []string
			for range tt.want {
				got = append(got, tt.s.Next(tt.ids, &st))
				if st.NextIndex < 0 || st.NextIndex >= len(tt.ids) {
					t.Fatalf("nextIndex %d out of [0,%d)", st.NextIndex, len(tt.ids))
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Next × %d = %q, want %q", len(tt.want), got, tt.want)
			}
			if st.NextIndex != tt.wantAfter {
				t.Errorf("nextIndex after = %d, want %d", st.NextIndex, tt.wantAfter)
			}
		})
	}
}
