package wire

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Duration is a time.Duration that reads and writes as a Go duration string ("30s",
// "5m"); a bare JSON number is read as seconds.
type Duration time.Duration

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1m30s" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("duration: want a string like \"30s\" or a number of seconds, got %s", b)
	}
	ns := secs * float64(time.Second)
	if ns >= math.MaxInt64 || ns <= math.MinInt64 {
		return fmt.Errorf("duration: %s seconds is out of range", b)
	}
	*d = Duration(ns)
	return nil
}

// Or returns d, or def when d is zero.
func (d Duration) Or(def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return time.Duration(d)
}
