package codec

import (
	"fmt"

	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// failureConverter is Temporal's default failure converter, except that a failure
// whose encoded attributes do not open keeps a message that says why.
type failureConverter struct {
	converter.FailureConverter
	dc converter.DataConverter
}

// UnreadableFailureError is a failure (Err, as Temporal's converter makes it) whose
// message and stack trace are sealed with a key this ring cannot open (Cause, the
// data converter's error: a *temporal.ApplicationError of type ErrTypeKey around a
// *KeyError). errors.As finds either.
type UnreadableFailureError struct {
	Err   error
	Cause error
}

func (e *UnreadableFailureError) Error() string { return e.Err.Error() }

func (e *UnreadableFailureError) Unwrap() []error { return []error{e.Err, e.Cause} }

// FailureToError converts f as Temporal's converter does. Each failure of the chain
// whose encoded attributes do not open has, for message, "a failure this key ring
// cannot read: <why, with the key id>" instead of "Encoded failure", and the error is
// an *UnreadableFailureError.
func (c failureConverter) FailureToError(f *failurepb.Failure) error {
	var cause error
	for x := f; x != nil && cause == nil; x = x.GetCause() {
		cause = c.unreadable(x)
	}
	if cause == nil {
		return c.FailureConverter.FailureToError(f)
	}
	f = proto.Clone(f).(*failurepb.Failure)
	for x := f; x != nil; x = x.GetCause() {
		if err := c.unreadable(x); err != nil {
			x.Message = fmt.Sprintf("a failure this key ring cannot read: %v", err)
			x.EncodedAttributes = nil
		}
	}
	return &UnreadableFailureError{Err: c.FailureConverter.FailureToError(f), Cause: cause}
}

// unreadable returns the error of opening f's encoded attributes; nil when it has
// none or they open.
func (c failureConverter) unreadable(f *failurepb.Failure) error {
	ea := f.GetEncodedAttributes()
	if ea == nil {
		return nil
	}
	var attrs struct {
		Message    string `json:"message"`
		StackTrace string `json:"stack_trace"`
	}
	return c.dc.FromPayload(ea, &attrs)
}
