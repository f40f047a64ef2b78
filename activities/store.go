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

// FileStore is a DocumentStore in a folder; its URIs are file:// URLs of absolute paths.
type FileStore struct {
	Dir string
}

// Put writes doc to Dir/name atomically (a temporary file renamed into place).
func (f FileStore) Put(_ context.Context, name string, doc []byte) (string, error) {
	if strings.ContainsAny(name, `/\`) || name == "" || name == "." || name == ".." {
		return "", fmt.Errorf("document store: bad name %q", name)
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
