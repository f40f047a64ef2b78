// Package codec is agentchat's Temporal PayloadCodec: every payload (workflow and
// activity inputs and results, updates, signals, queries, memos, heartbeats, and the
// failures' messages and stack traces) is sealed with the current key of a
// keyring.Ring before it leaves the process, so the event history holds no chat text.
// It follows temporalio/samples-go encryption/: the encrypted payload is the original
// payload's protobuf bytes, sealed, with metadata
//
//	encoding: binary/encrypted
//	encryption-key-id: <key id>
//
// Payloads without that encoding pass through Decode unchanged (histories written
// before encryption was turned on stay readable). The package also serves Temporal's
// remote codec protocol (NewHandler), for the Temporal UI and `temporal --codec-endpoint`.
package codec
