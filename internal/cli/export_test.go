package cli

import "time"

// SetWaitNotice sets waitNotice for a test and returns what puts it back.
func SetWaitNotice(d time.Duration) (restore func()) {
	old := waitNotice
	waitNotice = d
	return func() { waitNotice = old }
}

// SlashCommands returns the interactive chat's commands with their arguments, as
// its table lists them ("/approve CALL").
func SlashCommands() []string {
	out := make([]string, len(slashCommands))
	for i, c := range slashCommands {
		out[i] = c.usage()
	}
	return out
}
