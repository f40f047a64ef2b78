package workflows

import (
	"hash/fnv"

	"github.com/agentchat/agentchat/chat"
)

// versionStubbedCallIDs: a call id used by a message whose body is in the message store
// counts as used (uniqueCallIDs); before, only the ids of bodies in the workflow did.
const versionStubbedCallIDs = "stubbed-call-ids"

// versionRenamedCallIDsChecked: a call id renamed to "<replyId>#<n>" is checked again
// (used in the history, run under other arguments in a turn taken back, in callIDs)
// and renamed on until it is free; before, it was taken as it came, and a retried
// turn's reply, which has the same replyId, could run another call under the id of
// one that ran before.
const versionRenamedCallIDsChecked = "renamed-call-ids-checked"

// CallIDFilter remembers the call ids of messages whose bodies left the workflow (moved
// to the message store at continue-as-new, or by an import), so that a provider that
// reuses one gets a new id (uniqueCallIDs) and no two calls share an idempotency key.
//
// It is a Bloom filter of CallIDFilterBytes bytes whatever the chat's length, so that the
// carried state stays under its payload limit: it never misses an id it was given; it
// may take an id it was not given for used (about 1 in 3,000 once it holds 7,000 ids,
// about one call per reply at ChatLengthLimit), which only renames that call
// ("<replyId>#<n>"). JSON: base64.
type CallIDFilter []byte

// CallIDFilterBytes is the size of a CallIDFilter: 16 KiB (about 22 KB in a carry).
const CallIDFilterBytes = 16 << 10

// callIDHashes is the number of bits an id sets.
const callIDHashes = 7

// bits returns the filter's bit positions for id (double hashing of FNV-1a and FNV-1).
func (CallIDFilter) bits(id string) [callIDHashes]uint64 {
	a, b := fnv.New64a(), fnv.New64()
	_, _ = a.Write([]byte(id))
	_, _ = b.Write([]byte(id))
	h1, h2 := a.Sum64(), b.Sum64()|1
	var out [callIDHashes]uint64
	for i := range out {
		out[i] = (h1 + uint64(i)*h2) % (CallIDFilterBytes * 8)
	}
	return out
}

// Add returns the filter with id added (a new filter when f is empty).
func (f CallIDFilter) Add(id string) CallIDFilter {
	if len(f) != CallIDFilterBytes {
		f = make(CallIDFilter, CallIDFilterBytes)
	}
	for _, bit := range f.bits(id) {
		f[bit/8] |= 1 << (bit % 8)
	}
	return f
}

// MayHave reports whether id may have been added; false means it never was.
func (f CallIDFilter) MayHave(id string) bool {
	if len(f) != CallIDFilterBytes {
		return false
	}
	for _, bit := range f.bits(id) {
		if f[bit/8]&(1<<(bit%8)) == 0 {
			return false
		}
	}
	return true
}

// Union returns the filter with the ids of g added.
func (f CallIDFilter) Union(g CallIDFilter) CallIDFilter {
	if len(g) != CallIDFilterBytes {
		return f
	}
	if len(f) != CallIDFilterBytes {
		return append(CallIDFilter{}, g...)
	}
	for i := range f {
		f[i] |= g[i]
	}
	return f
}

// AddCalls returns the filter with the call ids of m's functionCalls added.
func (f CallIDFilter) AddCalls(m chat.Message) CallIDFilter {
	for _, c := range m.FunctionCalls() {
		f = f.Add(c.CallID)
	}
	return f
}
