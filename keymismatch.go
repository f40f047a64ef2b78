package agentchat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/codec"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/wire"
)

// keyMismatch returns ErrKeyMismatch for err of a call (verb, as "send to") on chat
// chatID when err comes from key rings that differ between this client and the
// chat's workers, else nil. The error says which side could not open what the other
// sealed, naming the key id, then err. took is what the call left when the workers
// did take it and only their answer does not open here ("" when that cannot be).
func (c *Client) keyMismatch(verb, chatID string, err error, took string) error {
	return c.mismatch(verb, chatID, err, took, false)
}

// mismatch is keyMismatch, told also whether the workers are known to have failed
// to open what this client sealed (workersFailed) when err does not show it.
func (c *Client) mismatch(verb, chatID string, err error, took string, workersFailed bool) error {
	if err == nil || c.keys == nil {
		return nil
	}
	workers, here := c.keyTrouble(err)
	if workers == "" && workersFailed {
		workers = c.notOpenedThere()
	}
	if workers == "" && here == "" {
		return nil
	}
	what := strings.Trim(workers+"; "+here, "; ")
	var unreadable *codec.UnreadableFailureError
	switch {
	case workers == "" && took != "" && !errors.As(err, &unreadable):
		what += "; " + took
	case workers != "" && took != "":
		what += "; nothing was sent: the chat did not take it" // its workers could not open it
	}
	// The message says what each side could not open and what to do, and leaves out
	// the codec's and the SDK's chain of causes (which repeats it), while errors.Is and
	// errors.As still find them.
	return &wrapped{msg: fmt.Sprintf(
		"agentchat: %s chat %q: %v: %s; give every client and worker of the chat the same key ring (AGENTCHAT_KEYS or --keys)",
		verb, chatID, ErrKeyMismatch, what), err: errors.Join(ErrKeyMismatch, err)}
}

// keyTrouble says what err tells of differing key rings: workers, that the chat's
// workers could not open what this client sealed (a failure of type codec.ErrTypeKey
// from a worker); here, that this client could not open what they sealed (a
// *codec.KeyError of this client's codec). Both "" when err tells neither.
func (c *Client) keyTrouble(err error) (workers, here string) {
	walkErrors(err, func(e error) {
		switch e := e.(type) {
		case *codec.KeyError:
			if here == "" {
				here = c.notOpened(e)
			}
		case *temporal.ApplicationError:
			var ke *codec.KeyError
			if e.Type() == codec.ErrTypeKey && !errors.As(e, &ke) { // from a worker: Go types do not cross the wire
				workers = c.notOpenedThere()
			}
		case *serviceerror.QueryFailed:
			if failedOnKey(e) {
				workers = c.notOpenedThere()
			}
		}
	})
	return workers, here
}

// notOpened says why this client could not open a payload of the workers.
func (c *Client) notOpened(ke *codec.KeyError) string {
	if errors.Is(ke, keyring.ErrNotAuthentic) {
		return fmt.Sprintf("their answer is sealed with key id %q, and this client's key of that id is another one", ke.KeyID)
	}
	return fmt.Sprintf("their answer is sealed with key id %q, which this client lacks (it holds %s)",
		ke.KeyID, strings.Join(c.keys.IDs(), ", "))
}

// notOpenedThere says that the workers could not open what this client sealed.
func (c *Client) notOpenedThere() string {
	return fmt.Sprintf("the workers cannot open this client's key id %q (they lack it, or hold other bytes under it)",
		c.keys.Current())
}

// failedOnKey reports whether a query failed because the worker could not open its
// arguments: a failure of type codec.ErrTypeKey in its chain, or, from a worker that
// sends only the message, that type named in it.
func failedOnKey(qf *serviceerror.QueryFailed) bool {
	for f := qf.Failure; f != nil; f = f.GetCause() {
		if isKeyFailure(f) {
			return true
		}
	}
	return strings.Contains(qf.Message, "(type: "+codec.ErrTypeKey+",")
}

func isKeyFailure(f *failurepb.Failure) bool {
	return f.GetApplicationFailureInfo().GetType() == codec.ErrTypeKey
}

// walkErrors calls f for err and every error it wraps, depth first.
func walkErrors(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walkErrors(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walkErrors(e, f)
		}
	}
}

// discardIfKeysDiffer handles err of a start through op, made at began, by a client
// with a key ring: when it comes from key rings that differ between this client and
// the workers (in the answer, or in the run it created, whose workers could not open
// its input before the update could answer), the run is deleted, as it can serve
// neither side (DeleteWorkflowExecution; a closed one goes when the server runs the
// deletion), so the id is free again; the error is ErrKeyMismatch and says so. Any
// other err is returned as it is.
func (c *Client) discardIfKeysDiffer(ctx context.Context, id string, op client.WithStartWorkflowOperation, began time.Time, err error) error {
	var taken *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &taken) {
		return err
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	run, rerr := c.createdRun(dctx, id, op, began)
	if rerr != nil || run == "" {
		if km := c.keyMismatch("start", id, err, ""); km != nil {
			return km
		}
		return err
	}
	// The run may have failed on its input, which its workers could not open, before
	// the update could answer: its history says so when the answer does not.
	km := c.mismatch("start", id, err, "", c.runKeyTrouble(dctx, id, run))
	if km == nil {
		return err
	}
	derr := c.deleteRun(dctx, id, run)
	if derr != nil {
		return fmt.Errorf("%w; deleting the chat it created failed (%v): delete it with: temporal workflow delete --workflow-id %s", km, derr, id)
	}
	return fmt.Errorf("%w; nothing is left: the chat it created was deleted (%s)", km, deletionNote)
}

// runKeyTrouble reports whether run run of chat id failed, or failed workflow tasks,
// because its workers could not open what this client sealed (a failure of type
// codec.ErrTypeKey).
func (c *Client) runKeyTrouble(ctx context.Context, id, run string) bool {
	it := c.tc.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return false
		}
		f := ev.GetWorkflowTaskFailedEventAttributes().GetFailure()
		if f == nil {
			f = ev.GetWorkflowExecutionFailedEventAttributes().GetFailure()
		}
		for ; f != nil; f = f.GetCause() {
			if isKeyFailure(f) {
				return true
			}
		}
	}
	return false
}

// guardKeys returns ErrKeyMismatch, before anything is written, when this client's
// key ring and the chat's workers' differ: a signal (Post) that the workers cannot
// open would be dropped by them, unseen by the sender. It asks the chat once for one
// message of its History (a query whose argument the workers must open and whose
// answer this client must) and remembers a chat that answered. Any other failure of
// the query lets the write go on, which then reports what it meets.
func (c *Client) guardKeys(ctx context.Context, verb, chatID string) error {
	if c.keys == nil {
		return nil
	}
	if _, ok := c.keyedChats.Load(chatID); ok {
		return nil
	}
	qctx, cancel := context.WithTimeout(ctx, guardWait)
	defer cancel()
	var h HistoryResult
	v, err := c.tc.QueryWorkflow(qctx, chatID, "", wire.HistoryQuery, HistoryInput{Limit: 1})
	if err == nil {
		err = v.Get(&h)
	}
	if err == nil {
		c.keyedChats.Store(chatID, struct{}{})
		return nil
	}
	if km := c.keyMismatch(verb, chatID, err, ""); km != nil {
		return fmt.Errorf("%w; nothing was sent", km)
	}
	return nil
}
