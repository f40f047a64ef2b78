// Package chatstate is the chat-state document, version 1: the JSON file the export
// activity writes and the import activity reads, the contract between clusters,
// namespaces, versions of agentchat and programs in other languages. The contract is
// chat-state-v1.md (shared with the design documents); chat-state-v1.schema.json in
// this package (Schema) is its JSON Schema, and testdata/golden holds examples of every
// version ever written. The package is pure: no I/O of its own (Encoder and Decoder use
// the io.WriterAt and io.ReaderAt they are given), no clock.
//
// # Encoding and digest
//
// Encode writes a Document in the JSON Canonicalization Scheme (RFC 8785, "JCS"):
// members sorted by name, no insignificant whitespace, strings and numbers in one
// spelling. The "digest" member is "sha256:" followed by the lowercase hex SHA-256 of
// the canonical form of the document without its "digest" member, so any language can
// recompute it: parse, drop "digest", canonicalize, hash. Because the form is canonical,
// a document Decode reads in canonical form is written back byte for byte, states and
// contents of unknown types included. Numbers in states and unknown contents must be
// ones RFC 8785 keeps exactly (IEEE 754 doubles): 12345678901234567890 is refused rather
// than altered.
//
// # Streaming
//
// Encoder writes the same bytes as Encode for a history it reads one message at a time
// (History), so that a long chat is exported without its history in memory. The digest
// member sorts before the history ("chatId" < "digest" < "exportedAt" < "history"), so
// the Encoder hashes the document as it writes it, around the digest member's room, and
// fills that room in at the end: it writes to an io.WriterAt. Decoder is its
// counterpart: from an io.ReaderAt, Header reads and checks the whole document with
// the heap of one message, then History reads the messages again one at a time; it
// returns what Decode returns, errors included, and leaves to Decode (in memory) any
// document not laid out as Encode writes it.
//
// # Decoding
//
// Decode reads schemaVersion first. A version this reader does not know is refused. An
// older version is upgraded: the upgrade table (upgrade.go) has, for each older version
// N, a step that verifies an N document by N's rules (its digest included) and one that
// turns it into an N+1 document; Decode applies them up to SchemaVersion and reads the
// result as a current document (Report.UpgradedFrom). Version 1 is the first version, so
// the table is empty today; golden files of every version stay in testdata for good.
//
// Decode then checks the JSON shape, verifies the digest on the document as read (before
// any repair), and validates the rules of chat-state-v1.md (Document.Validate). Every
// error is a *FieldError naming the field, e.g. "history[3].contents[0].callId".
//
// # Contents by role
//
// Validate refuses a content in a role a model cannot take it from (chat-state-v1.md):
// a functionCall outside an assistant message or with a name that is not an OpenAI
// function name, a functionResult outside a tool message, a text in a tool message, an
// image outside a user message, and an assistant message with neither text nor
// functionCall. The error names the content: "history[3].contents[0]".
//
// # Tool-call pairing
//
// chat-state-v1.md: every functionCall is answered by a functionResult with the same
// callId before the next non-tool message; a document that breaks this is repaired on
// import or refused, never passed to a model as it is. Decode, walking the history:
//
//   - leaves alone the functionCalls still open at the end of the history: the turn is
//     waiting for their results (e.g. a tool call awaiting a person's approval), and the
//     importing chat answers them (approval, or running the tool) before any model call;
//   - repairs a functionCall that has no functionResult before the next non-tool
//     message: right after the tool messages that follow the call, or right after the
//     call's message when none do, it inserts the tool message
//     {"messageId": "<call's messageId>/repair-<callId>", "role": "tool", "contents":
//     [{"type": "functionResult", "callId": "<callId>", "result": "", "error":
//     "no result was recorded for this call (added on import)"}]}
//     (RepairMessageID, RepairError), and lists the repair in Report.Repairs, naming the
//     call's field by its index in the document as read and the inserted message's
//     index in the repaired history;
//   - refuses a functionResult whose callId matches no earlier unanswered functionCall
//     (dropping it would lose data), naming its callId;
//   - refuses a callId used by two functionCalls.
//
// Encode refuses what Decode would refuse, and writes an unanswered call as it is.
package chatstate
