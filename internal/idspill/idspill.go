// Package idspill keeps the id hashes of a streamed chat-state document that a
// chatstate.Decoder or Encoder has no room for in memory (past chatstate.SpillAfter
// of a kind) in a temporary SQLite file, so that reading or writing a document of any
// length keeps a flat heap: about chatstate.SpillAfter hashes of each kind in memory,
// the others on disk, a B-tree insert and look-up each.
//
// The file is created in a folder of the caller's choosing (os.TempDir by default),
// named agentchat-idspill-*.db, written without a journal or fsync (it lives as long
// as one document's check), and its name is removed as soon as SQLite has it open, so
// that even a process killed part-way leaves nothing behind (on Windows, where an
// open file keeps its name, Close removes it).
package idspill

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/agentchat/agentchat/chatstate"
)

// cacheKiB is SQLite's page cache of a spill, in KiB: the B-tree's upper pages stay
// in memory, its leaves are read from the file (the OS's page cache). With pageBytes
// pages, a million new keys take about 2.5 s on the 2-core machine (BenchmarkPut);
// 4 KiB pages took 7.5 s, a cache of 16 MiB 10% less than this one.
const cacheKiB = 4096

// pageBytes is the size of the spill file's pages: 32 KiB, a read or write of the file
// for about a thousand keys.
const pageBytes = 32 << 10

// batchRows is how many new entries a Set gathers in memory before it writes them to
// its file, in one INSERT (3 parameters a row, far below SQLite's 32,766).
const batchRows = 512

// filterBits is the size of a Set's filter of the keys in its file, in bits (1 MiB):
// two bits a key, so a look-up of a key the file does not hold reads it anyway with a
// probability of about (1-e^(-2n/filterBits))², 4.5% at a million keys. The filter's
// size is fixed, so the Set's heap does not grow with its keys; past several million
// keys most look-ups read the file, and a Set grows slower, not bigger.
const filterBits = 1 << filterLog

// filterLog is log2(filterBits): a key's bits in the filter are the top filterLog bits
// of each half of the key.
const filterLog = 23

// Set is an IDSpill backed by a temporary SQLite file, with the latest batchRows new
// entries in memory and a filter that spares the file's look-up for most new keys. It
// is not safe for concurrent use (chatstate uses one from one goroutine).
type Set struct {
	db      *sql.DB
	tx      *sql.Tx
	get     *sql.Stmt
	insert  *sql.Stmt // of batchRows rows
	path    string
	ctx     context.Context
	closed  bool
	pending map[chatstate.IDKey]int64 // not written yet
	filter  []uint64                  // bits of the keys written and pending
}

// Opener returns a chatstate.SpillOpener of Sets in dir ("" for os.TempDir()).
func Opener(dir string) chatstate.SpillOpener {
	return func() (chatstate.IDSpill, error) { return Open(dir) }
}

// Open creates a Set in a new temporary file in dir ("" for os.TempDir()). Errors
// name the file.
func Open(dir string) (*Set, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, "agentchat-idspill-*.db")
	if err != nil {
		return nil, fmt.Errorf("idspill: create a temporary file: %w", err)
	}
	path := f.Name()
	if err := f.Close(); err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("idspill: %s: %w", path, err)
	}
	s, err := open(path)
	if err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("idspill: %s: %w", path, err)
	}
	if unlinkOpen {
		// SQLite holds the file open (one connection, pinned by the Set's transaction,
		// no journal): its name can go now, so that a process killed part-way leaves
		// nothing behind; the system frees the file when the process ends.
		if err := os.Remove(path); err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("idspill: %s: %w", path, err)
		}
	}
	return s, nil
}

// unlinkOpen says whether Open removes the file's name once SQLite has it open: on
// systems where an open file outlives its name (not Windows).
var unlinkOpen = runtime.GOOS != "windows"

func open(path string) (*Set, error) {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(OFF)")
	q.Add("_pragma", "synchronous(OFF)")
	q.Add("_pragma", "locking_mode(EXCLUSIVE)")
	q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", cacheKiB))
	q.Add("_pragma", fmt.Sprintf("page_size(%d)", pageBytes))
	dsn := "file:" + (&url.URL{Path: filepath.ToSlash(path)}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	s := &Set{db: db, path: path, ctx: context.Background()}
	fail := func(err error) (*Set, error) {
		if s.tx != nil {
			_ = s.tx.Rollback()
		}
		_ = db.Close()
		return nil, err
	}
	if _, err := db.ExecContext(s.ctx, `CREATE TABLE ids (a INTEGER NOT NULL, b INTEGER NOT NULL, v INTEGER NOT NULL,
		PRIMARY KEY (a, b)) WITHOUT ROWID`); err != nil {
		return fail(err)
	}
	// One transaction for the Set's life: nothing needs to outlive it, and a commit
	// per id would cost a write of the file each.
	if s.tx, err = db.BeginTx(s.ctx, nil); err != nil {
		return fail(err)
	}
	if s.insert, err = s.tx.PrepareContext(s.ctx, insertSQL(batchRows)); err != nil {
		return fail(err)
	}
	s.pending, s.filter = make(map[chatstate.IDKey]int64, batchRows), make([]uint64, filterBits/64)
	if s.get, err = s.tx.PrepareContext(s.ctx, `SELECT v FROM ids WHERE a = ? AND b = ?`); err != nil {
		return fail(err)
	}
	return s, nil
}

// insertSQL is the INSERT of n rows.
func insertSQL(n int) string {
	return "INSERT INTO ids (a, b, v) VALUES (?, ?, ?)" + strings.Repeat(", (?, ?, ?)", n-1)
}

// bits are key's two bits in the filter: the top bits of each half of a key that is
// itself a hash.
func bits(key chatstate.IDKey) (uint64, uint64) {
	return key[0] >> (64 - filterLog), key[1] >> (64 - filterLog)
}

func (s *Set) mayHold(key chatstate.IDKey) bool {
	a, b := bits(key)
	return s.filter[a/64]&(1<<(a%64)) != 0 && s.filter[b/64]&(1<<(b%64)) != 0
}

// Put records key with v unless key is recorded; it returns the value first recorded
// and whether key was recorded before (chatstate.IDSpill).
func (s *Set) Put(key chatstate.IDKey, v int64) (int64, bool, error) {
	first, ok, err := s.Get(key)
	if err != nil || ok {
		return first, ok, err
	}
	s.pending[key] = v
	a, b := bits(key)
	s.filter[a/64] |= 1 << (a % 64)
	s.filter[b/64] |= 1 << (b % 64)
	if len(s.pending) == batchRows {
		if err := s.flush(); err != nil {
			return 0, false, err
		}
	}
	return v, false, nil
}

// flush writes the pending entries to the file.
func (s *Set) flush() error {
	args := make([]any, 0, 3*len(s.pending))
	for k, v := range s.pending {
		args = append(args, int64(k[0]), int64(k[1]), v)
	}
	var err error
	if len(s.pending) == batchRows {
		_, err = s.insert.ExecContext(s.ctx, args...)
	} else {
		_, err = s.tx.ExecContext(s.ctx, insertSQL(len(s.pending)), args...)
	}
	if err != nil {
		return fmt.Errorf("idspill: %s: insert: %w", s.path, err)
	}
	clear(s.pending)
	return nil
}

// Get returns the value recorded for key, if any (chatstate.IDSpill).
func (s *Set) Get(key chatstate.IDKey) (int64, bool, error) {
	if s.closed {
		return 0, false, errors.New("idspill: the set is closed")
	}
	if v, ok := s.pending[key]; ok {
		return v, true, nil
	}
	if !s.mayHold(key) {
		return 0, false, nil
	}
	var v int64
	err := s.get.QueryRowContext(s.ctx, int64(key[0]), int64(key[1])).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("idspill: %s: look-up: %w", s.path, err)
	}
	return v, true, nil
}

// Close closes the database and removes its file; a second Close does nothing.
func (s *Set) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.pending, s.filter = nil, nil
	_ = s.insert.Close()
	_ = s.get.Close()
	_ = s.tx.Rollback() // nothing in it is wanted
	err := s.db.Close()
	if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return fmt.Errorf("idspill: %s: close: %w", s.path, err)
	}
	return nil
}
