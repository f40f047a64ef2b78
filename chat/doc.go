// Package chat holds the vocabulary every other agentchat package shares: messages
// and their contents, the chat-state document (../shared/chat-state-v1.md), and channel
// keys. It imports only the standard library, so the workflow code (deterministic) and
// programs in other processes can use it alike.
//
// JSON field names are camelCase and absent optional fields are omitted, as the
// chat-state document requires; these types are the wire format of the AgentChat
// workflow's updates, signals and queries as well.
package chat
