// Package recordtool is a tool with a side effect that tests can count: each call
// appends to a ledger file, deduplicating on the call's idempotency key (the way
// README's "Tools with side effects" asks every such tool to). It backs the crash tests
// that kill a worker process right after a tool ran (the worker command with it is in
// ./worker).
package recordtool

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/agentchat/agentchat/activities"
)

// Event kinds of a ledger entry.
const (
	// Attempt: the tool function was called (every attempt of every call).
	Attempt = "attempt"
	// Ran: the side effect happened (once per idempotency key, if the tool is right).
	Ran = "ran"
)

// Entry is one line of the ledger (JSON).
type Entry struct {
	Event  string `json:"event"`
	Key    string `json:"key"`
	PID    int    `json:"pid"`
	Result string `json:"result,omitempty"`
}

// Tool returns the tool function. Each call records an attempt; the first call with
// a key records that it ran (written and synced before anything else), waits hold
// (the window in which a test kills the process: after the side effect, before the
// completion reaches Temporal), and returns "recorded <key>". A later call with the
// same key returns that result and runs nothing. A call without a chat or call id (no
// key) is a ToolError.
func Tool(path string, hold time.Duration) activities.ToolFunc {
	var mu sync.Mutex // one process's calls; the test runs one process at a time
	return func(ctx context.Context, _ json.RawMessage) (string, error) {
		call, ok := activities.CallOf(ctx)
		if !ok || call.ChatID == "" || call.CallID == "" {
			return "", activities.ToolError("record: the call has no idempotency key")
		}
		key := call.IdempotencyKey()
		mu.Lock()
		defer mu.Unlock()
		entries, err := Read(path)
		if err != nil {
			return "", err
		}
		if err := appendEntry(path, Entry{Event: Attempt, Key: key, PID: os.Getpid()}); err != nil {
			return "", err
		}
		for _, e := range entries {
			if e.Event == Ran && e.Key == key {
				return e.Result, nil // ran before: the first answer, no second side effect
			}
		}
		res := "recorded " + key
		if err := appendEntry(path, Entry{Event: Ran, Key: key, PID: os.Getpid(), Result: res}); err != nil {
			return "", err
		}
		select {
		case <-time.After(hold):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return res, nil
	}
}

// appendEntry appends e to the ledger and syncs it to disk.
func appendEntry(path string, e Entry) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("recordtool: %w", err)
	}
	b, _ := json.Marshal(e)
	if _, err := f.Write(append(b, '\n')); err != nil {
		_ = f.Close()
		return fmt.Errorf("recordtool: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("recordtool: %w", err)
	}
	return f.Close()
}

// Read returns the ledger's entries in order; a missing ledger has none.
func Read(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("recordtool: %w", err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("recordtool: %s: %w", path, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// Count returns how many entries of event the ledger has for key.
func Count(entries []Entry, event, key string) int {
	n := 0
	for _, e := range entries {
		if e.Event == event && e.Key == key {
			n++
		}
	}
	return n
}
