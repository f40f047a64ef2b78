// Package agentchat is the Go client of agentchat: durable multi-agent conversations on
// Temporal. Each chat (AgentChat) is one Temporal workflow whose event history holds the
// primary chat; agents reply through activities that call OpenAI-compatible models.
//
// A service starts a chat with Client.Start (or Client.Run for a one-turn temporary
// thread), sends user turns with Client.Send (a Temporal update that returns the agents'
// replies) or Client.Post (a signal), and reads Client.State and Client.History
// (queries). Package hosting builds the worker that hosts the workflow and its
// activities.
//
// Every name on the wire (workflow type, task queue, update, signal and query names) is
// a constant in package workflows, so programs in other languages can drive a chat with
// their own Temporal SDK; README.md documents the payloads.
package agentchat
