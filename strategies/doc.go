// Package strategies holds a group chat's selection and termination strategies and the
// history reducers of a chat_history channel (Semantic Kernel's SelectionStrategy,
// TerminationStrategy and ChatHistoryReducer; AutoGen's speaker selection and
// termination conditions).
//
// Everything here is a pure function of its settings, its state and the history: no
// clock, no randomness, no file, network or config access, so the AgentChat workflow
// runs them deterministically and replays them unchanged. The settings and states are
// JSON payloads of the wire contract (AgentChatInput.selection/termination, the
// document's strategies and channel states; chat-state-v1.md); the strategies that ask
// an agent (an LLM selector, a judge) or a summarizing reducer only say so here, and
// the workflow runs that call as an activity.
package strategies
