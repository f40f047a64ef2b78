package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentchat/agentchat/activities"
)

// MaxWait is the longest Wait accepts.
const MaxWait = 10 * time.Minute

// Wait waits the given number of seconds and says so: a stand-in for a slow tool (a
// report, a payment), and an example of one that stops when its call is cancelled.
// Arguments: {"seconds": 5}, at most MaxWait.
func Wait(ctx context.Context, args json.RawMessage) (string, error) {
	var in struct {
		Seconds float64 `json:"seconds"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return "", activities.ToolError("wait: arguments %s: want {\"seconds\": 5}", args)
	}
	d := time.Duration(in.Seconds * float64(time.Second))
	if d < 0 || d > MaxWait {
		return "", activities.ToolError("wait: seconds must be between 0 and %d", int(MaxWait.Seconds()))
	}
	select {
	case <-ctx.Done():
		return "", fmt.Errorf("wait: cancelled: %w", context.Cause(ctx))
	case <-time.After(d):
		return fmt.Sprintf("waited %s", d), nil
	}
}
