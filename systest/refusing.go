package systest

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/wire"
)

// refuseFile is the file, in the world's folder, that lists the chats whose message
// store refuses writes part of the time (refusingStore): "<chat id> <percent>" a line.
const refuseFile = "refusing-chats.txt"

// StoreRefusal is in the error of every write refusingStore refuses; a chat's errors
// that quote it come from that refusal.
const StoreRefusal = "systest: the store refuses"

// refusingStore is the workers' message store. For the chats listed in refuseFile it
// refuses a share of the writes a chat makes as it runs (a model call storing a large
// reply, a continue-as-new moving older bodies), the same ones every time, as a store
// refuses an id it holds with another body (msgstore.ErrConflict). Imports are never
// refused: the final export, import and migration of every chat must succeed.
type refusingStore struct {
	msgstore.Store
	list string
}

func newRefusingStore(st msgstore.Store, dir string) *refusingStore {
	return &refusingStore{Store: st, list: filepath.Join(dir, refuseFile)}
}

// Put refuses msgs when refuses says so, else writes them.
func (s *refusingStore) Put(ctx context.Context, chatID string, msgs []chat.Message) error {
	if len(msgs) > 0 && s.refuses(ctx, chatID, msgs[0].MessageID) {
		return fmt.Errorf("%s chat %q message %q: %w", StoreRefusal, chatID, msgs[0].MessageID, msgstore.ErrConflict)
	}
	return s.Store.Put(ctx, chatID, msgs)
}

// refuses reports whether the write of a batch that begins with message id, by the
// activity of ctx, is refused: the chat is listed, the activity is a model call or a
// StoreMessages, and a hash of (chat, id) modulo 100 is under the chat's percentage.
func (s *refusingStore) refuses(ctx context.Context, chatID, id string) bool {
	if !activity.IsActivity(ctx) {
		return false
	}
	switch activity.GetInfo(ctx).ActivityType.Name {
	case wire.StoreMessagesActivity, wire.InvokeAgentActivity, wire.WritePagesActivity:
	default:
		return false
	}
	b, err := os.ReadFile(s.list)
	if err != nil {
		return false
	}
	pct := 0
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == chatID {
			pct, _ = strconv.Atoi(f[1])
		}
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(chatID + "\x00" + id))
	return int(h.Sum32()%100) < pct
}

// listRefusing adds chat id, whose store refuses pct percent of its writes, to the
// world's refuseFile.
func listRefusing(dir, id string, pct int) error {
	f, err := os.OpenFile(filepath.Join(dir, refuseFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%s %d\n", id, pct)
	return err
}

// PutPage refuses the page when refuses says so for its first message (a
// continue-as-new's WritePages too: the chat then keeps the messages in its window),
// else writes it to the inner store, which must keep pages (sqlite and postgres do).
func (s *refusingStore) PutPage(ctx context.Context, chatID string, p msgstore.Page) (string, error) {
	ps, err := s.pages()
	if err != nil {
		return "", err
	}
	if len(p.IDs) > 0 && s.refuses(ctx, chatID, p.IDs[0].ID) {
		return "", fmt.Errorf("%s chat %q page %s: %w", StoreRefusal, chatID, p.Key(), msgstore.ErrConflict)
	}
	return ps.PutPage(ctx, chatID, p)
}

// GetPage reads from the inner store.
func (s *refusingStore) GetPage(ctx context.Context, chatID string, key msgstore.PageKey) ([]byte, error) {
	ps, err := s.pages()
	if err != nil {
		return nil, err
	}
	return ps.GetPage(ctx, chatID, key)
}

// GetPageRow reads from the inner store.
func (s *refusingStore) GetPageRow(ctx context.Context, chatID string, key msgstore.PageKey) (msgstore.PageRow, error) {
	ps, err := s.pages()
	if err != nil {
		return msgstore.PageRow{}, err
	}
	return ps.GetPageRow(ctx, chatID, key)
}

// LookupIDs reads from the inner store.
func (s *refusingStore) LookupIDs(ctx context.Context, chatID string, kind msgstore.IDKind, ids []string, in []msgstore.LineageRange) (map[string]msgstore.IDLocation, error) {
	ps, err := s.pages()
	if err != nil {
		return nil, err
	}
	return ps.LookupIDs(ctx, chatID, kind, ids, in)
}

// DeleteLineage deletes in the inner store.
func (s *refusingStore) DeleteLineage(ctx context.Context, chatID, lineage string) error {
	ps, err := s.pages()
	if err != nil {
		return err
	}
	return ps.DeleteLineage(ctx, chatID, lineage)
}

// pages is the inner store as a PageStore.
func (s *refusingStore) pages() (msgstore.PageStore, error) {
	ps, ok := s.Store.(msgstore.PageStore)
	if !ok {
		return nil, fmt.Errorf("systest: the store %q keeps no pages: %w", s.Store.Name(), msgstore.ErrInvalid)
	}
	return ps, nil
}

var _ msgstore.PageStore = (*refusingStore)(nil)
