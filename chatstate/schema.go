package chatstate

import _ "embed"

// Schema is the JSON Schema (draft 2020-12) of the chat-state document, version 1:
// chat-state-v1.schema.json in this package, for other packages to serve or test with.
//
//go:embed chat-state-v1.schema.json
var Schema []byte
