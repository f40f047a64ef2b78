package workflows

import "go.temporal.io/sdk/workflow"

// resumeEarly takes over a continued run's carry before the handlers are registered
// (the SDK runs an update delivered with the first workflow task at registration), so
// that the first updates find the idempotency record whole and queue behind the turns
// and signals that came before them.
func (s *chatState) resumeEarly(ctx workflow.Context) {
	if s.in.Carry == nil || s.in.Validate() != nil {
		return
	}
	s.resume(ctx, s.in.Carry)
}
