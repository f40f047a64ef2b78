package postgres

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
)

// PutPage writes page p of chatID and its id rows in one transaction; see
// msgstore.PageStore.
func (s *Store) PutPage(ctx context.Context, chatID string, p msgstore.Page) (string, error) {
	if s.closed.Load() {
		return "", fmt.Errorf("msgstore: postgres put page: %w", msgstore.ErrClosed)
	}
	ids, err := msgstore.CheckPage(msgstore.NamePostgres, chatID, p)
	if err != nil {
		return "", err
	}
	// One lock order for all writers, so two pages sharing ids cannot deadlock.
	slices.SortFunc(ids, func(a, b msgstore.PageID) int {
		return cmp.Or(strings.Compare(string(a.Kind), string(b.Kind)), strings.Compare(a.ID, b.ID))
	})
	opCtx, cancel := context.WithTimeout(ctx, msgstore.OpTimeout)
	defer cancel()
	var digest string
	err = pgx.BeginFunc(opCtx, s.pool, func(tx pgx.Tx) error {
		var err error
		digest, err = putPage(opCtx, tx, chatID, p, ids)
		return err
	})
	if err != nil {
		return "", s.wrap(ctx, opCtx, "postgres put chat "+strconv.Quote(chatID)+" page "+p.Key().String(), err)
	}
	return digest, nil
}

// putPage writes p and its checked ids in tx, or checks that the same page is there
// (stored before, or by a concurrent transaction that committed meanwhile).
func putPage(ctx context.Context, tx pgx.Tx, chatID string, p msgstore.Page, ids []msgstore.PageID) (string, error) {
	tag, err := tx.Exec(ctx, `INSERT INTO chat_pages (chat_id, lineage, level, seq, first_index, count, body)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (chat_id, lineage, level, seq) DO NOTHING`,
		chatID, p.Lineage, p.Level, p.Seq, p.First, p.Count, p.Body)
	if err != nil {
		return "", err
	}
	if tag.RowsAffected() == 0 {
		var stored []byte
		err := tx.QueryRow(ctx, "SELECT body FROM chat_pages WHERE chat_id = $1 AND lineage = $2 AND level = $3 AND seq = $4",
			chatID, p.Lineage, p.Level, p.Seq).Scan(&stored)
		switch {
		case err != nil:
			return "", err
		case !bytes.Equal(stored, p.Body):
			return "", msgstore.PageConflictError(msgstore.NamePostgres, chatID, p.Key(), msgstore.PageDigest(stored), msgstore.PageDigest(p.Body))
		}
		return msgstore.PageDigest(stored), nil
	}
	for part := range slices.Chunk(ids, postgresChunk) {
		if err := insertIDs(ctx, tx, chatID, p, part); err != nil {
			return "", err
		}
	}
	return msgstore.PageDigest(p.Body), nil
}

// insertIDs inserts the id rows of part, which page p holds, and checks that those
// the lineage already held are at the same index and page: ErrConflict otherwise.
func insertIDs(ctx context.Context, tx pgx.Tx, chatID string, p msgstore.Page, part []msgstore.PageID) error {
	kinds, ids, roles := make([]string, len(part)), make([]string, len(part)), make([]string, len(part))
	idxs := make([]int64, len(part))
	for i, id := range part {
		kinds[i], ids[i], idxs[i], roles[i] = string(id.Kind), id.ID, id.Index, string(id.Role)
	}
	rows, err := tx.Query(ctx, `INSERT INTO chat_message_ids (chat_id, lineage, kind, id, idx, seq, role)
		SELECT $1, $2, r.kind, r.id, r.idx, $3, r.role
		FROM unnest($4::text[], $5::text[], $6::bigint[], $7::text[]) WITH ORDINALITY AS r(kind, id, idx, role, n) ORDER BY r.n
		ON CONFLICT (chat_id, lineage, kind, id) DO NOTHING
		RETURNING kind, id`, chatID, p.Lineage, p.Seq, kinds, ids, idxs, roles)
	if err != nil {
		return err
	}
	inserted := make(map[msgstore.PageID]bool, len(part))
	var kind, id string
	_, err = pgx.ForEachRow(rows, []any{&kind, &id}, func() error {
		inserted[msgstore.PageID{Kind: msgstore.IDKind(kind), ID: id}] = true
		return nil
	})
	if err != nil || len(inserted) == len(part) {
		return err
	}
	for _, id := range part {
		if inserted[msgstore.PageID{Kind: id.Kind, ID: id.ID}] {
			continue
		}
		var held msgstore.IDLocation
		err := tx.QueryRow(ctx, "SELECT idx, seq FROM chat_message_ids WHERE chat_id = $1 AND lineage = $2 AND kind = $3 AND id = $4",
			chatID, p.Lineage, string(id.Kind), id.ID).Scan(&held.Index, &held.Seq)
		if err != nil {
			return err
		}
		if held.Index != id.Index || held.Seq != p.Seq {
			return msgstore.IDConflictError(msgstore.NamePostgres, chatID, p.Key(), id, held)
		}
	}
	return nil
}

// GetPage returns the stored row of a page of chatID; see msgstore.PageStore.
func (s *Store) GetPage(ctx context.Context, chatID string, key msgstore.PageKey) ([]byte, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("msgstore: postgres get page: %w", msgstore.ErrClosed)
	}
	if err := msgstore.CheckPageKey(msgstore.NamePostgres, chatID, key); err != nil {
		return nil, err
	}
	opCtx, cancel := context.WithTimeout(ctx, msgstore.OpTimeout)
	defer cancel()
	var body []byte
	err := s.pool.QueryRow(opCtx, "SELECT body FROM chat_pages WHERE chat_id = $1 AND lineage = $2 AND level = $3 AND seq = $4",
		chatID, key.Lineage, key.Level, key.Seq).Scan(&body)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, msgstore.PageMissingError(msgstore.NamePostgres, chatID, key)
	case err != nil:
		return nil, s.wrap(ctx, opCtx, "postgres get chat "+strconv.Quote(chatID)+" page "+key.String(), err)
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
	return msgstore.PlainPageRow(msgstore.NamePostgres, chatID, key, row)
}

// LookupIDs returns where the ids of kind are in the ranges of chatID, with one query
// per range; see msgstore.PageStore.
func (s *Store) LookupIDs(ctx context.Context, chatID string, kind msgstore.IDKind, ids []string, in []msgstore.LineageRange) (map[string]msgstore.IDLocation, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("msgstore: postgres look up ids: %w", msgstore.ErrClosed)
	}
	distinct, err := msgstore.CheckLookup(msgstore.NamePostgres, chatID, kind, ids, in)
	if err != nil {
		return nil, err
	}
	found := make(map[string]msgstore.IDLocation)
	if len(distinct) == 0 {
		return found, nil
	}
	opCtx, cancel := context.WithTimeout(ctx, msgstore.OpTimeout)
	defer cancel()
	for _, r := range in {
		if err := lookupIDs(opCtx, s.pool, chatID, kind, distinct, r, found); err != nil {
			return nil, s.wrap(ctx, opCtx, "postgres look up ids in chat "+strconv.Quote(chatID), err)
		}
	}
	return found, nil
}

// lookupIDs adds to found the ids that range r holds and found lacks.
func lookupIDs(ctx context.Context, q pgQuerier, chatID string, kind msgstore.IDKind, ids []string, r msgstore.LineageRange, found map[string]msgstore.IDLocation) error {
	below := r.Below
	if below <= 0 {
		below = -1 // no limit: the query tests $5 < 0
	}
	rows, err := q.Query(ctx, `SELECT id, idx, seq, role FROM chat_message_ids
		WHERE chat_id = $1 AND lineage = $2 AND kind = $3 AND id = ANY($4::text[]) AND ($5::bigint < 0 OR idx < $5::bigint)`,
		chatID, r.Lineage, string(kind), ids, below)
	if err != nil {
		return err
	}
	var id, role string
	var loc msgstore.IDLocation
	_, err = pgx.ForEachRow(rows, []any{&id, &loc.Index, &loc.Seq, &role}, func() error {
		if _, ok := found[id]; !ok {
			found[id] = msgstore.IDLocation{Lineage: r.Lineage, Index: loc.Index, Seq: loc.Seq, Role: chat.Role(role)}
		}
		return nil
	})
	return err
}

// DeleteLineage removes the pages and id rows of a lineage of chatID in one
// transaction; see msgstore.PageStore. There is no table of forks' references yet
// (chat_page_refs, docs/design/paged-history.md): when forks share pages, it must
// refuse a lineage a fork references.
func (s *Store) DeleteLineage(ctx context.Context, chatID, lineage string) error {
	if s.closed.Load() {
		return fmt.Errorf("msgstore: postgres delete lineage: %w", msgstore.ErrClosed)
	}
	if err := msgstore.CheckLineage(msgstore.NamePostgres, chatID, lineage); err != nil {
		return err
	}
	opCtx, cancel := context.WithTimeout(ctx, msgstore.OpTimeout)
	defer cancel()
	err := pgx.BeginFunc(opCtx, s.pool, func(tx pgx.Tx) error {
		for _, table := range []string{"chat_pages", "chat_message_ids"} {
			if _, err := tx.Exec(opCtx, "DELETE FROM "+table+" WHERE chat_id = $1 AND lineage = $2", chatID, lineage); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return s.wrap(ctx, opCtx, "postgres delete chat "+strconv.Quote(chatID)+" lineage "+strconv.Quote(lineage), err)
	}
	return nil
}
