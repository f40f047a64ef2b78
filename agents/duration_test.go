package agents

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentchat/agentchat/wire"
)

func TestDurationUnmarshalJSON(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{`"30s"`, 30 * time.Second},
		{`"1m30s"`, 90 * time.Second},
		{`"250ms"`, 250 * time.Millisecond},
		{`"0s"`, 0},
		{`30`, 30 * time.Second},
		{`0`, 0},
		{`1.5`, 1500 * time.Millisecond},
		{`0.001`, time.Millisecond},
		{`-2`, -2 * time.Second}, // read as given; ParseConfig refuses negative call durations
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var d wire.Duration
			if err := json.Unmarshal([]byte(tt.in), &d); err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.in, err)
			}
			if time.Duration(d) != tt.want {
				t.Errorf("Unmarshal(%s) = %v, want %v", tt.in, time.Duration(d), tt.want)
			}
		})
	}
}

func TestDurationUnmarshalJSONErrors(t *testing.T) {
	for _, in := range []string{
		`"soon"`, `"30"`, `""`, `"30 s"`, `"1h-"`,
		`true`, `{}`, `[30]`, `{"seconds":30}`,
		`1e300`, `-1e300`, `9300000000`, // beyond time.Duration's ~292 years
	} {
		t.Run(in, func(t *testing.T) {
			d := wire.Duration(7)
			if err := json.Unmarshal([]byte(in), &d); err == nil {
				t.Errorf("Unmarshal(%s) = %v, want an error", in, time.Duration(d))
			}
		})
	}
}

func TestDurationMarshalJSON(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{30 * time.Second, `"30s"`},
		{90 * time.Second, `"1m30s"`},
		{0, `"0s"`},
		{1500 * time.Millisecond, `"1.5s"`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(wire.Duration(tt.in))
		if err != nil || string(b) != tt.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tt.in, b, err, tt.want)
		}
		var back wire.Duration
		if err := json.Unmarshal(b, &back); err != nil || time.Duration(back) != tt.in {
			t.Errorf("round trip of %v = %v, %v", tt.in, time.Duration(back), err)
		}
	}
}

func TestDurationOr(t *testing.T) {
	tests := []struct {
		d, def, want time.Duration
	}{
		{0, time.Minute, time.Minute},
		{time.Second, time.Minute, time.Second},
		{-time.Second, time.Minute, -time.Second},
	}
	for _, tt := range tests {
		if got := wire.Duration(tt.d).Or(tt.def); got != tt.want {
			t.Errorf("Duration(%v).Or(%v) = %v, want %v", tt.d, tt.def, got, tt.want)
		}
	}
}
