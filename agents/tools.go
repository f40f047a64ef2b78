package agents

import (
	"encoding/json"
	"fmt"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// validateTools checks the config's tools and the agents' references to them.
func validateTools(tools map[string]wire.Tool, defs []Definition) error {
	for name, t := range tools {
		if !chat.FunctionNamePattern.MatchString(name) {
			return fmt.Errorf("%w: tool %q: a name must match %s (OpenAI function names)", ErrInvalidConfig, name, chat.FunctionNamePattern)
		}
		if len(t.Parameters) > 0 {
			var obj map[string]any
			if err := json.Unmarshal(t.Parameters, &obj); err != nil {
				return fmt.Errorf("%w: tool %q: parameters must be a JSON Schema object: %w", ErrInvalidConfig, name, err)
			}
		}
		if t.MaxAttempts < 0 || t.Timeout < 0 || t.HeartbeatTimeout < 0 {
			return fmt.Errorf("%w: tool %q: timeout, heartbeatTimeout and maxAttempts must not be negative", ErrInvalidConfig, name)
		}
	}
	for _, d := range defs {
		for _, name := range d.GoTools() {
			if _, ok := tools[name]; !ok {
				return fmt.Errorf("%w: agent %q uses tool %q, which the config's tools do not define", ErrInvalidConfig, d.ID, name)
			}
		}
	}
	return nil
}
