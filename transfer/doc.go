// Package transfer reads a chat out of Temporal: its chat-state document (BuildDocument,
// from the chat run's ExportSnapshot and History queries, or StreamDocument, its
// history one answer at a time for a chatstate.Encoder), its history in pages
// (ReadHistory), the pages of its older history from a message store, checked against
// their index (ReadPages, FollowPages), the bodies of stub messages (FillStubs), and the
// file:// URIs by which documents travel (FileURI, PathOf). The export activity and the
// client's Export share it, so a document is built one way wherever it is built.
//
// It needs a Temporal client and the msgstore interface only: no model client, no
// database driver, no file I/O (the callers read and write the files).
package transfer
