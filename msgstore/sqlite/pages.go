package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
)

// sqliteIDRows is how many id rows one INSERT of PutPage writes (7 parameters each):
// a page of 256 messages (wire.PageMessages) in one statement.
const sqliteIDRows = 256

// PutPage writes page p of chatID and its id rows in one transaction; see
// msgstore.PageStore.
func (s *Store) PutPage(ctx context.Context, chatID string, p msgstore.Page) (string, error) {
	digests, err := s.PutPages(ctx, chatID, []msgstore.Page{p})
	if err != nil {
		return "", err
	}
	return digests[0], nil
}

// PutPages writes pages of chatID and their id rows in one transaction; see
// msgstore.PageBatchStore. An error names the page that failed.
func (s *Store) PutPages(ctx context.Context, chatID string, pages []msgstore.Page) ([]string, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("msgstore: sqlite put page: %w", msgstore.ErrClosed)
	}
	ids := make([][]msgstore.PageID, len(pages))
	for i, p := range pages {
		var err error
		if ids[i], err = msgstore.CheckPage(msgstore.NameSQLite, chatID, p); err != nil {
			return nil, err
		}
	}
	if len(pages) == 0 {
		return nil, nil
	}
	opCtx, cancel := context.WithTimeout(ctx, msgstore.OpTimeout)
	defer cancel()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	digests := make([]string, len(pages))
	at := len(pages) - 1 // the page being written, or the last one at the commit
	err := s.inTx(opCtx, func(tx *sql.Tx) error {
		ins := &idInserter{tx: tx}
		defer ins.close()
		for i, p := range pages {
			at = i
			var err error
			if digests[i], err = putPage(opCtx, tx, ins, chatID, p, ids[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, msgstore.WrapOp(ctx, opCtx, "sqlite put chat "+strconv.Quote(chatID)+" page "+pages[at].Key().String(), err, sqliteUnavailable)
	}
	return digests, nil
}

// putPage writes p and its checked ids in tx, or checks that the same page is there.
func putPage(ctx context.Context, tx *sql.Tx, ins *idInserter, chatID string, p msgstore.Page, ids []msgstore.PageID) (string, error) {
	var stored []byte
	err := tx.QueryRowContext(ctx, "SELECT body FROM chat_pages WHERE chat_id = ? AND lineage = ? AND level = ? AND seq = ?",
		chatID, p.Lineage, p.Level, p.Seq).Scan(&stored)
	switch {
	case err == nil && bytes.Equal(stored, p.Body):
		return msgstore.PageDigest(stored), nil
	case err == nil:
		return "", msgstore.PageConflictError(msgstore.NameSQLite, chatID, p.Key(), msgstore.PageDigest(stored), msgstore.PageDigest(p.Body))
	case !errors.Is(err, sql.ErrNoRows):
		return "", err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO chat_pages (chat_id, lineage, level, seq, first_index, count, body, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, chatID, p.Lineage, p.Level, p.Seq, p.First, p.Count, p.Body, time.Now().UnixMilli())
	if err != nil {
		return "", err
	}
	for part := range slices.Chunk(ids, sqliteIDRows) {
		if err := ins.insert(ctx, chatID, p, part); err != nil {
			return "", err
		}
	}
	return msgstore.PageDigest(p.Body), nil
}

// idInserter writes the id rows of a transaction's pages, up to sqliteIDRows a
// statement; the statement of a full chunk is prepared once a transaction, as parsing
// it costs as much as running it.
type idInserter struct {
	tx   *sql.Tx
	full *sql.Stmt // prepared on first use
}

// close releases the prepared statement.
func (ins *idInserter) close() {
	if ins.full != nil {
		_ = ins.full.Close()
	}
}

// idInsertSQL is the INSERT of n id rows. Its parameters are anonymous: the driver
// looks up the name of every numbered one in a list, which makes binding a statement
// of numbered ones quadratic.
func idInsertSQL(n int) string {
	return "INSERT OR IGNORE INTO chat_message_ids (chat_id, lineage, kind, id, idx, seq, role) VALUES (?, ?, ?, ?, ?, ?, ?)" +
		strings.Repeat(", (?, ?, ?, ?, ?, ?, ?)", n-1)
}

// insert inserts the id rows of part, which page p holds, and checks that those the
// lineage already held are at the same index and page: ErrConflict otherwise. A
// first write inserts every row, which the statement's count of changes tells without
// reading rows back; only when some were held already (a retry, or an id another page
// holds) are the ids of part read back, one at a time.
func (ins *idInserter) insert(ctx context.Context, chatID string, p msgstore.Page, part []msgstore.PageID) error {
	args := make([]any, 0, 7*len(part))
	for _, id := range part {
		args = append(args, chatID, p.Lineage, string(id.Kind), id.ID, id.Index, p.Seq, string(id.Role))
	}
	var res sql.Result
	var err error
	if len(part) == sqliteIDRows {
		if ins.full == nil {
			if ins.full, err = ins.tx.PrepareContext(ctx, idInsertSQL(sqliteIDRows)); err != nil {
				return err
			}
		}
		res, err = ins.full.ExecContext(ctx, args...)
	} else {
		res, err = ins.tx.ExecContext(ctx, idInsertSQL(len(part)), args...)
	}
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == int64(len(part)) {
		return nil
	}
	// Some were held: each id must be where this page puts it (those just inserted are).
	for _, id := range part {
		var held msgstore.IDLocation
		err := ins.tx.QueryRowContext(ctx, "SELECT idx, seq FROM chat_message_ids WHERE chat_id = ? AND lineage = ? AND kind = ? AND id = ?",
			chatID, p.Lineage, string(id.Kind), id.ID).Scan(&held.Index, &held.Seq)
		if err != nil {
			return err
		}
		if held.Index != id.Index || held.Seq != p.Seq {
			return msgstore.IDConflictError(msgstore.NameSQLite, chatID, p.Key(), id, held)
		}
	}
	return nil
}

// GetPage returns the stored row of a page of chatID; see msgstore.PageStore.
func (s *Store) GetPage(ctx context.Context, chatID string, key msgstore.PageKey) ([]byte, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("msgstore: sqlite get page: %w", msgstore.ErrClosed)
	}
	if err := msgstore.CheckPageKey(msgstore.NameSQLite, chatID, key); err != nil {
		return nil, err
	}
	opCtx, cancel := context.WithTimeout(ctx, msgstore.OpTimeout)
	defer cancel()
	var body []byte
	err := s.db.QueryRowContext(opCtx, "SELECT body FROM chat_pages WHERE chat_id = ? AND lineage = ? AND level = ? AND seq = ?",
		chatID, key.Lineage, key.Level, key.Seq).Scan(&body)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, msgstore.PageMissingError(msgstore.NameSQLite, chatID, key)
	case err != nil:
		return nil, msgstore.WrapOp(ctx, opCtx, "sqlite get chat "+strconv.Quote(chatID)+" page "+key.String(), err, sqliteUnavailable)
	}
	return body, nil
}

// GetPageRow returns the stored row of a page of chatID as both its stored bytes and
// its body; a sealed row is msgstore.ErrEncrypted. See msgstore.PageStore.
func (s *Store) GetPageRow(ctx context.Context, chatID string, key msgstore.PageKey) (msgstore.PageRow, error) {
	row, err := s.GetPage(ctx, chatID, key)
	if err != nil {
		return msgstore.PageRow{}, err
	}
	return msgstore.PlainPageRow(msgstore.NameSQLite, chatID, key, row)
}

// LookupIDs returns where the ids of kind are in the ranges of chatID; see
// msgstore.PageStore.
func (s *Store) LookupIDs(ctx context.Context, chatID string, kind msgstore.IDKind, ids []string, in []msgstore.LineageRange) (map[string]msgstore.IDLocation, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("msgstore: sqlite look up ids: %w", msgstore.ErrClosed)
	}
	distinct, err := msgstore.CheckLookup(msgstore.NameSQLite, chatID, kind, ids, in)
	if err != nil {
		return nil, err
	}
	opCtx, cancel := context.WithTimeout(ctx, msgstore.OpTimeout)
	defer cancel()
	found := make(map[string]msgstore.IDLocation)
	for _, r := range in {
		for part := range slices.Chunk(distinct, sqliteChunk) {
			if err := lookupIDs(opCtx, s.db, chatID, kind, part, r, found); err != nil {
				return nil, msgstore.WrapOp(ctx, opCtx, "sqlite look up ids in chat "+strconv.Quote(chatID), err, sqliteUnavailable)
			}
		}
	}
	return found, nil
}

// lookupIDs adds to found the ids of part that range r holds and found lacks, with one
// query.
func lookupIDs(ctx context.Context, q sqlQuerier, chatID string, kind msgstore.IDKind, part []string, r msgstore.LineageRange, found map[string]msgstore.IDLocation) error {
	args := make([]any, 0, len(part)+4)
	args = append(args, chatID, r.Lineage, string(kind))
	for _, id := range part {
		args = append(args, id)
	}
	query := "SELECT id, idx, seq, role FROM chat_message_ids WHERE chat_id = ? AND lineage = ? AND kind = ? AND id IN (?" +
		strings.Repeat(", ?", len(part)-1) + ")"
	if r.Below > 0 {
		query += " AND idx < ?"
		args = append(args, r.Below)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, role string
		loc := msgstore.IDLocation{Lineage: r.Lineage}
		if err := rows.Scan(&id, &loc.Index, &loc.Seq, &role); err != nil {
			return err
		}
		if _, ok := found[id]; !ok {
			loc.Role = chat.Role(role)
			found[id] = loc
		}
	}
	return rows.Err()
}

// DeleteLineage removes the pages and id rows of a lineage of chatID in one
// transaction; see msgstore.PageStore. There is no table of forks' references yet
// (chat_page_refs, docs/design/paged-history.md): when forks share pages, it must
// refuse a lineage a fork references.
func (s *Store) DeleteLineage(ctx context.Context, chatID, lineage string) error {
	if s.closed.Load() {
		return fmt.Errorf("msgstore: sqlite delete lineage: %w", msgstore.ErrClosed)
	}
	if err := msgstore.CheckLineage(msgstore.NameSQLite, chatID, lineage); err != nil {
		return err
	}
	opCtx, cancel := context.WithTimeout(ctx, msgstore.OpTimeout)
	defer cancel()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	err := s.inTx(opCtx, func(tx *sql.Tx) error {
		for _, table := range []string{"chat_pages", "chat_message_ids"} {
			if _, err := tx.ExecContext(opCtx, "DELETE FROM "+table+" WHERE chat_id = ? AND lineage = ?", chatID, lineage); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return msgstore.WrapOp(ctx, opCtx, "sqlite delete chat "+strconv.Quote(chatID)+" lineage "+strconv.Quote(lineage), err, sqliteUnavailable)
	}
	return nil
}
