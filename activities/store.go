package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentchat/agentchat/transfer"
)

// DocumentStore holds chat-state documents too large to travel inline (over
// wire.InlineLimit). Put stores a document under a name and returns its URI; Get
// reads a URI that this or another worker's store returned. For a migration across
// clusters, both clusters' workers must reach the same store (a shared volume for
// FileStore; an object store bucket for an implementation of your own).
type DocumentStore interface {
	Put(ctx context.Context, name string, doc []byte) (uri string, err error)
	Get(ctx context.Context, uri string) ([]byte, error)
}

// DocumentOpener is a DocumentStore whose documents can be read in place: an import
// then reads a document of any length with a flat heap (chatstate.Decoder) instead of
// holding its bytes (Get). Open returns a reader of the document at uri and its size in
// bytes; the caller closes it. Errors as Get's.
type DocumentOpener interface {
	Open(ctx context.Context, uri string) (DocumentReader, int64, error)
}

// DocumentReader reads a document a DocumentOpener opened; an *os.File is one.
type DocumentReader interface {
	io.ReaderAt
	io.Closer
}

// DocumentCreator is a DocumentStore that a document can be written into piece by
// piece (chatstate.Encoder), so that an export of any length is written with a flat
// heap instead of being built whole for Put. Create returns a writer of a new
// document; its Commit stores it under a name (as Put would) and returns its URI.
type DocumentCreator interface {
	Create(ctx context.Context) (DocumentWriter, error)
}

// DocumentWriter writes one document of a DocumentCreator, and reads back what it
// wrote. Commit puts it in place, atomically, under name; Abort drops it. Either ends
// the writer, and Abort after Commit does nothing.
type DocumentWriter interface {
	io.WriterAt
	io.ReaderAt
	Commit(name string) (uri string, err error)
	Abort()
}

// FileStore is a DocumentStore in a folder; its URIs are file:// URLs of absolute paths.
type FileStore struct {
	Dir string
}

// Put writes doc to Dir/name atomically (a temporary file renamed into place).
func (f FileStore) Put(_ context.Context, name string, doc []byte) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	dir, err := filepath.Abs(f.Dir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := writeFileAtomic(path, doc); err != nil {
		return "", fmt.Errorf("document store: %w", err)
	}
	return transfer.FileURI(path), nil
}

// Get reads a file:// URI.
func (f FileStore) Get(_ context.Context, uri string) ([]byte, error) {
	path, err := transfer.PathOf(uri)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("document store: %w", err)
	}
	return b, nil
}

// Open opens the file of a file:// URI (any file the worker can read, as Get does).
func (f FileStore) Open(_ context.Context, uri string) (DocumentReader, int64, error) {
	path, err := transfer.PathOf(uri)
	if err != nil {
		return nil, 0, err
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("document store: %w", err)
	}
	info, err := file.Stat()
	if err != nil {
		_ = file.Close()
		return nil, 0, fmt.Errorf("document store: %w", err)
	}
	return file, info.Size(), nil
}

// Create returns a writer of a document in Dir, a temporary file until Commit renames
// it to Dir/name.
func (f FileStore) Create(_ context.Context) (DocumentWriter, error) {
	dir, err := filepath.Abs(f.Dir)
	if err != nil {
		return nil, err
	}
	w, err := newTempDocument(dir, func(name string) (string, error) {
		if err := checkName(name); err != nil {
			return "", err
		}
		return filepath.Join(dir, name), nil
	})
	if err != nil {
		return nil, fmt.Errorf("document store: %w", err)
	}
	return w, nil
}

// checkName refuses a name that is not one file's in the store's folder.
func checkName(name string) error {
	if strings.ContainsAny(name, `/\`) || name == "" || name == "." || name == ".." {
		return fmt.Errorf("document store: bad name %q", name)
	}
	return nil
}

// tempDocument is a DocumentWriter of a temporary file in a folder, renamed into
// place by Commit to the path target gives for the name.
type tempDocument struct {
	*os.File
	target func(name string) (string, error)
	done   bool
}

func newTempDocument(dir string, target func(name string) (string, error)) (*tempDocument, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return nil, err
	}
	return &tempDocument{File: f, target: target}, nil
}

func (t *tempDocument) Commit(name string) (string, error) {
	path, err := t.target(name)
	if err != nil {
		t.Abort()
		return "", err
	}
	t.done = true
	if err := t.Close(); err != nil {
		_ = os.Remove(t.Name())
		return "", err
	}
	if err := os.Rename(t.Name(), path); err != nil {
		_ = os.Remove(t.Name())
		return "", err
	}
	return transfer.FileURI(path), nil
}

func (t *tempDocument) Abort() {
	if t.done {
		return
	}
	t.done = true
	_ = t.Close()
	_ = os.Remove(t.Name())
}

// writeFileAtomic writes b to path through a temporary file in the same folder, so a
// reader never sees half a document.
func writeFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
