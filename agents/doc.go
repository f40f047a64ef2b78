// Package agents holds agent definitions and their registry (loaded from a YAML or JSON
// config file), agent kinds and their channels, and the selection and termination
// strategies of a group chat.
//
// Definitions are stateless and live on the worker: a chat names its participants by
// agent id and never carries instructions, endpoints or keys (DESIGN.md). The
// strategies are pure functions of their settings and state, so the AgentChat workflow
// runs them deterministically.
package agents
