package cli

import "time"

// SetWaitNotice sets waitNotice for a test and returns what puts it back.
func SetWaitNotice(d time.Duration) (restore func()) {
	old := waitNotice
	waitNotice = d
	return func() { waitNotice = old }
}
