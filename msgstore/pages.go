package msgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/agentchat/agentchat/chat"
)

// PageStore is a Store that also keeps a chat's history in immutable pages
// (docs/design/paged-history.md, section 4; docs/chat-state-v1.md, "Message store
// pages"): rows of table chat_pages keyed by (chat, lineage, level, seq), and the
// message and call ids of level-0 pages in table chat_message_ids, so that an id can be
// found without reading pages. The SQLite and PostgreSQL stores implement it, and
// Sealed does over a PageStore. Safe for concurrent use.
type PageStore interface {
	Store
	// PutPage writes the page row and its id rows (p.IDs) in one transaction, and
	// returns the digest (PageDigest) of the row as stored: the first write's. It does
	// not write message bodies: a message whose encoded body passes 64 KiB goes to its
	// own row by Put, before, and the page holds its stub. Idempotent: the same bytes
	// again under (chatID, p.Lineage, p.Level, p.Seq) are a no-op; other bytes there
	// are ErrConflict naming both digests; an id the lineage already holds at another
	// index (or in another page) is ErrConflict naming both indexes. Nothing of a call
	// that fails is written. An invalid chat id, lineage, number or id is ErrInvalid.
	PutPage(ctx context.Context, chatID string, p Page) (digest string, err error)
	// GetPage returns the page's row: the bytes as stored for a store, the plaintext
	// body for Sealed. A page the chat lacks is ErrPageMissing, wrapped, naming the
	// chat and the key.
	GetPage(ctx context.Context, chatID string, key PageKey) ([]byte, error)
	// GetPageRow returns the page's row as stored and its plaintext body in one read
	// (PageRow), so that a reader checks the digest (of the row as stored) and decodes
	// the body: a store gives its row as both, Sealed the stored row and its opening. A
	// sealed row read without the key ring (a store as it is) is ErrEncrypted naming
	// its key id; a page the chat lacks is ErrPageMissing, as for GetPage. A row read
	// that does not open (Sealed: *keyring.UnknownKeyError, keyring.ErrNotAuthentic)
	// comes with its error and Stored set, so that a reader still checks its digest.
	GetPageRow(ctx context.Context, chatID string, key PageKey) (PageRow, error)
	// LookupIDs returns where the ids of kind are, searching the ranges in order (a
	// chat's own lineage, a fork's sources below their fork index): an id held by
	// several ranges is reported from the first. Ids found in none are absent from the
	// map; no ids or no ranges give an empty map.
	LookupIDs(ctx context.Context, chatID string, kind IDKind, ids []string, in []LineageRange) (map[string]IDLocation, error)
	// DeleteLineage removes a lineage's pages and id rows in one transaction (an
	// abandoned import); a lineage the chat lacks is a no-op. Other lineages and chats
	// are untouched.
	DeleteLineage(ctx context.Context, chatID, lineage string) error
}

// PageBatchStore is a PageStore that also writes several pages of a chat in one
// transaction: one commit, and so one sync of the store's log, for the pages an import
// or a carry writes, rather than one each. The SQLite store implements it.
type PageBatchStore interface {
	PageStore
	// PutPages is PutPage of each of pages, in order, in one transaction, and returns
	// their digests in that order. Each page is checked, and is a no-op or a conflict,
	// as PutPage's; a call that fails writes none of them. No pages is a no-op.
	PutPages(ctx context.Context, chatID string, pages []Page) (digests []string, err error)
}

// PageKey names one page of a chat: its lineage, its level (0: messages; n ≥ 1: index
// entries of level n-1 pages) and its sequence number within (chat, lineage, level),
// from 0.
type PageKey struct {
	Lineage string
	Level   int
	Seq     int64
}

// String gives the key as errors name it: lineage "L" level 0 seq 7.
func (k PageKey) String() string {
	return "lineage " + strconv.Quote(k.Lineage) + " level " + strconv.Itoa(k.Level) + " seq " + strconv.FormatInt(k.Seq, 10)
}

// Page is one page as PutPage takes it.
type Page struct {
	Lineage string
	Level   int   // 0: messages; n ≥ 1: index entries of level n-1 pages
	Seq     int64 // 0, 1, 2... within (chat, lineage, level)
	First   int64 // absolute index of the first message it covers, ≥ 0
	Count   int64 // messages it covers (all levels), ≥ 1
	// Body is the plaintext body, canonical JSON (docs/chat-state-v1.md, "Message
	// store pages"); not empty. Stores keep it as bytes and never parse it.
	Body []byte
	// IDs are the message and call ids a level-0 page holds, for LookupIDs; each
	// Index within [First, First+Count). Level ≥ 1 pages hold none.
	IDs []PageID
}

// Key returns the page's key.
func (p Page) Key() PageKey { return PageKey{Lineage: p.Lineage, Level: p.Level, Seq: p.Seq} }

// PageID is one id a level-0 page holds: a message id, or the call id of a function
// call or result, with the absolute index and role of the message holding it.
type PageID struct {
	Kind  IDKind
	ID    string
	Index int64
	Role  chat.Role
}

// IDKind is the kind of an id in chat_message_ids: IDMessage or IDCall.
type IDKind string

// The kinds of IDKind, as table chat_message_ids stores them in column kind.
const (
	IDMessage IDKind = "m" // a message id
	IDCall    IDKind = "c" // a function call's id (call and result share it)
)

// IDLocation is where LookupIDs found an id: the lineage, the absolute index of the
// message holding it, the seq of the level-0 page holding that message, and the
// message's role.
type IDLocation struct {
	Lineage string
	Index   int64
	Seq     int64
	Role    chat.Role
}

// LineageRange is a lineage LookupIDs searches: the messages of indexes below Below,
// or all of them when Below ≤ 0.
type LineageRange struct {
	Lineage string
	Below   int64
}

// PageDigest returns "sha256:" and the lowercase hex SHA-256 of a page row as stored
// (sealed or not): what PutPage returns and an index entry records.
func PageDigest(row []byte) string {
	sum := sha256.Sum256(row)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CheckPage validates the arguments of PutPage: a valid chat id and lineage (UTF-8
// text without NUL, not empty), Level, Seq and First ≥ 0, Count ≥ 1, a Body, ids of a
// known kind, valid, with a role, inside [First, First+Count), and only on level 0.
// It returns p.IDs without repeats (an id given twice at one index is kept once; at two
// indexes it is ErrConflict naming both). Errors are ErrInvalid naming the chat and
// page. store is the Name of the calling store, for the errors.
func CheckPage(store, chatID string, p Page) ([]PageID, error) {
	if err := checkPageKey(store, "put", chatID, p.Key()); err != nil {
		return nil, err
	}
	where := fmt.Sprintf("msgstore: %s put chat %q: page %s", store, chatID, p.Key())
	switch {
	case p.First < 0 || p.Count < 1:
		return nil, fmt.Errorf("%s: %w: first %d, count %d (first ≥ 0, count ≥ 1)", where, ErrInvalid, p.First, p.Count)
	case len(p.Body) == 0:
		return nil, fmt.Errorf("%s: %w: empty body", where, ErrInvalid)
	case p.Level > 0 && len(p.IDs) > 0:
		return nil, fmt.Errorf("%s: %w: %d ids on a level %d page (ids belong to level 0)", where, ErrInvalid, len(p.IDs), p.Level)
	}
	out := make([]PageID, 0, len(p.IDs))
	seen := make(map[PageID]int, len(p.IDs))
	for _, id := range p.IDs {
		if err := checkKind(id.Kind); err != nil {
			return nil, fmt.Errorf("%s: id %q: %w", where, id.ID, err)
		}
		if err := validID(id.ID); err != nil {
			return nil, fmt.Errorf("%s: id %q: %w", where, id.ID, err)
		}
		if err := validID(string(id.Role)); err != nil {
			return nil, fmt.Errorf("%s: id %q: role %q: %w", where, id.ID, id.Role, err)
		}
		if id.Index < p.First || id.Index >= p.First+p.Count {
			return nil, fmt.Errorf("%s: id %q: %w: index %d outside the page's messages %d to %d",
				where, id.ID, ErrInvalid, id.Index, p.First, p.First+p.Count-1)
		}
		key := PageID{Kind: id.Kind, ID: id.ID}
		if j, dup := seen[key]; dup {
			if out[j].Index != id.Index {
				return nil, IDConflictError(store, chatID, p.Key(), id, IDLocation{Lineage: p.Lineage, Index: out[j].Index, Seq: p.Seq})
			}
			continue
		}
		seen[key] = len(out)
		out = append(out, id)
	}
	return out, nil
}

// CheckPageKey validates the arguments of GetPage: a valid chat id and lineage, Level
// and Seq ≥ 0. Errors are ErrInvalid.
func CheckPageKey(store, chatID string, key PageKey) error {
	return checkPageKey(store, "get", chatID, key)
}

func checkPageKey(store, op, chatID string, key PageKey) error {
	if err := validID(chatID); err != nil {
		return fmt.Errorf("msgstore: %s %s page: chat id %q: %w", store, op, chatID, err)
	}
	if err := validID(key.Lineage); err != nil {
		return fmt.Errorf("msgstore: %s %s chat %q: page lineage %q: %w", store, op, chatID, key.Lineage, err)
	}
	if key.Level < 0 || key.Seq < 0 {
		return fmt.Errorf("msgstore: %s %s chat %q: page %s: %w: level and seq are ≥ 0", store, op, chatID, key, ErrInvalid)
	}
	return nil
}

// CheckLookup validates the arguments of LookupIDs (a valid chat id, kind, ids and
// lineages; ErrInvalid otherwise) and returns ids without repeats, in first-seen order.
func CheckLookup(store, chatID string, kind IDKind, ids []string, in []LineageRange) ([]string, error) {
	if err := validID(chatID); err != nil {
		return nil, fmt.Errorf("msgstore: %s look up ids: chat id %q: %w", store, chatID, err)
	}
	if err := checkKind(kind); err != nil {
		return nil, fmt.Errorf("msgstore: %s look up ids in chat %q: %w", store, chatID, err)
	}
	for _, r := range in {
		if err := validID(r.Lineage); err != nil {
			return nil, fmt.Errorf("msgstore: %s look up ids in chat %q: lineage %q: %w", store, chatID, r.Lineage, err)
		}
	}
	seen := make(map[string]bool, len(ids))
	distinct := make([]string, 0, len(ids))
	for _, id := range ids {
		if err := validID(id); err != nil {
			return nil, fmt.Errorf("msgstore: %s look up ids in chat %q: id %q: %w", store, chatID, id, err)
		}
		if !seen[id] {
			seen[id] = true
			distinct = append(distinct, id)
		}
	}
	return distinct, nil
}

// CheckLineage validates the arguments of DeleteLineage (ErrInvalid otherwise).
func CheckLineage(store, chatID, lineage string) error {
	if err := validID(chatID); err != nil {
		return fmt.Errorf("msgstore: %s delete lineage: chat id %q: %w", store, chatID, err)
	}
	if err := validID(lineage); err != nil {
		return fmt.Errorf("msgstore: %s delete lineage of chat %q: lineage %q: %w", store, chatID, lineage, err)
	}
	return nil
}

func checkKind(kind IDKind) error {
	if kind != IDMessage && kind != IDCall {
		return fmt.Errorf("%w: id kind %q (want %q or %q)", ErrInvalid, kind, IDMessage, IDCall)
	}
	return nil
}

// PageConflictError is the ErrConflict of a PutPage that found key stored in chatID
// with other bytes: stored and given are their digests (PageDigest).
func PageConflictError(store, chatID string, key PageKey, stored, given string) error {
	return &wrapped{
		msg: fmt.Sprintf("msgstore: %s put chat %q: page %s is already stored with other bytes (stored %s, given %s)",
			store, chatID, key, stored, given),
		err: ErrConflict,
	}
}

// IDConflictError is the ErrConflict of a PutPage whose page key holds id, which the
// lineage already holds at held.
func IDConflictError(store, chatID string, key PageKey, id PageID, held IDLocation) error {
	return &wrapped{
		msg: fmt.Sprintf("msgstore: %s put chat %q: page %s: %s id %q at index %d is already at index %d (page seq %d)",
			store, chatID, key, kindName(id.Kind), id.ID, id.Index, held.Index, held.Seq),
		err: ErrConflict,
	}
}

// PageMissingError is the ErrPageMissing of a GetPage that found no row under key.
func PageMissingError(store, chatID string, key PageKey) error {
	return fmt.Errorf("msgstore: %s get chat %q: page %s: %w", store, chatID, key, ErrPageMissing)
}

func kindName(k IDKind) string {
	if k == IDCall {
		return "call"
	}
	return "message"
}

// wrapped is an error whose message is msg, in place of err's, and that unwraps to err.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }
