package systest

// knownFaults are faults of today's code that the system test finds, by issue and
// item number ("10.4" is issue 10, fault 4; "16.1" is issue 16, item 1). While a fault
// is listed, the generator leaves out the action class that runs into it (an agent
// behaviour, a config variant, a size or an action; each names the faults it needs
// fixed). Remove an entry once its fix is merged: the action class comes back, and the
// test shows whether the fix holds. `-systest.faults=all` runs every class anyway.
var knownFaults = map[string]string{
	// Not a fault of agentchat but of the stand-in: the offline model streams a 2.3 MB
	// reply as one SSE chunk so slowly under -race on 2 cores that the call passes this
	// test's 30 s call timeout, four attempts in a row, and the chat's later turns wait
	// minutes (seen in CI, round seed 708581051). Fault 10.4 itself (a reply over 2 MB
	// stored, exported, imported and migrated) is covered by
	// TestChatWithAReplyOverThePayloadLimitImportsAndMigrates on a non-streaming
	// endpoint. Remove once the offline model streams large replies in many chunks.
	"M1": "the offline model streams a reply over 2 MB too slowly for the test's call timeout under -race",
}

// blocked reports whether any of faults is known (and not overridden by the flag).
func (g *generator) blocked(faults ...string) bool { return isBlocked(g.allFaults, faults...) }

func isBlocked(all bool, faults ...string) bool {
	for _, f := range faults {
		if _, ok := knownFaults[f]; ok && !all {
			return true
		}
	}
	return false
}
