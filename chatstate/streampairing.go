package chatstate

import (
	"cmp"
	"fmt"
	"hash/maphash"

	"github.com/agentchat/agentchat/chat"
)

// IDKey is a 128-bit hash of an id: two ids of a document share one with a
// probability of about n²/2¹²⁹, nil for any document that fits on a disk.
type IDKey [2]uint64

// SpillAfter is how many ids of one kind (message ids, call ids) a streamed Decoder or
// Encoder keeps the hashes of in memory, about 50 bytes each; past it, with an IDSpill
// (Decoder.SpillIDs, Encoder.SpillIDs), the others go there, so that its heap stays
// flat however long the document. 65,536: a document of up to about 45,000 messages
// (32 MiB of chat text, what a worker reads whole) never spills.
const SpillAfter = 1 << 16

// IDSpill keeps the id hashes of a streamed Decoder or Encoder past SpillAfter, one
// kind of id per IDSpill (opened when the first is due to go there, closed when the
// document has been read or written). It need not be safe for concurrent use.
type IDSpill interface {
	// Put records key with value v unless key is recorded already; it returns the value
	// first recorded and whether key was recorded before (when it records nothing).
	Put(key IDKey, v int64) (first int64, dup bool, err error)
	// Get returns the value recorded for key, if any.
	Get(key IDKey) (v int64, ok bool, err error)
	// Close releases what the spill holds (its file).
	Close() error
}

// spillAfter is SpillAfter, lowered by tests.
var spillAfter = SpillAfter

// SpillOpener opens an IDSpill; nil keeps every id hash in memory.
type SpillOpener func() (IDSpill, error)

// hashedIDs is a set of ids of a streamed document, each with a value (an int64): it
// keeps hashes, not the ids, so that its size does not depend on the ids' length and
// it holds no message's memory. Its first SpillAfter entries are in a map, the others
// in an IDSpill when it has an opener; the first error of the spill is kept in err,
// and the set then takes nothing more.
type hashedIDs struct {
	seeds [2]maphash.Seed
	refs  map[IDKey]int64
	open  SpillOpener
	spill IDSpill
	err   error
}

func newHashedIDs(open SpillOpener) *hashedIDs {
	return &hashedIDs{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, refs: map[IDKey]int64{}, open: open}
}

func (s *hashedIDs) key(id string) IDKey {
	return IDKey{maphash.String(s.seeds[0], id), maphash.String(s.seeds[1], id)}
}

// put records k with v unless k is recorded; it returns the value first recorded and
// whether k was recorded before. After an error of the spill (s.err) it records
// nothing and reports k new.
func (s *hashedIDs) put(k IDKey, v int64) (int64, bool) {
	if first, dup := s.refs[k]; dup {
		return first, true
	}
	if s.err != nil {
		return v, false
	}
	if len(s.refs) < spillAfter || s.open == nil {
		s.refs[k] = v
		return v, false
	}
	if s.spill == nil {
		if s.spill, s.err = s.open(); s.err != nil {
			s.err = fmt.Errorf("chatstate: opening the spill of id hashes: %w", s.err)
			return v, false
		}
	}
	first, dup, err := s.spill.Put(k, v)
	if err != nil {
		s.err = fmt.Errorf("chatstate: the spill of id hashes: %w", err)
		return v, false
	}
	return first, dup
}

// has reports whether k is recorded.
func (s *hashedIDs) has(k IDKey) bool {
	if _, ok := s.refs[k]; ok || s.spill == nil || s.err != nil {
		return ok
	}
	_, ok, err := s.spill.Get(k)
	if err != nil {
		s.err = fmt.Errorf("chatstate: the spill of id hashes: %w", err)
	}
	return ok
}

// close closes the spill, if one was opened; it returns s.err or the error of Close.
func (s *hashedIDs) close() error {
	if s.spill == nil {
		return s.err
	}
	err := s.spill.Close()
	s.spill = nil
	if s.err != nil {
		return s.err
	}
	if err != nil {
		return fmt.Errorf("chatstate: closing the spill of id hashes: %w", err)
	}
	return nil
}

// add is idSet's add: a message id, history[i] recorded as i, pendingTurns[i] as -1-i.
func (s *hashedIDs) add(id string, ref msgRef) (msgRef, bool) {
	v := int64(ref.i)
	if ref.list != "history" {
		v = -1 - v
	}
	first, dup := s.put(s.key(id), v)
	if !dup {
		return ref, false
	}
	if first < 0 {
		return msgRef{"pendingTurns", int(-1 - first)}, true
	}
	return msgRef{"history", int(first)}, true
}

// callRefValue packs a callRef into a hashedIDs value: i in the high 32 bits, j in the
// low (a message of a document holds far fewer than 2³² contents).
func callRefValue(r callRef) int64 { return int64(r.i)<<32 | int64(uint32(r.j)) }

func callRefOf(v int64) callRef { return callRef{int(v >> 32), int(uint32(v))} }

// pairPos is a step of pairCalls: the content history[i].contents[j], or, with j = -1,
// the repair of the k-th open call before history[i]. Steps are ordered as pairCalls
// takes them.
type pairPos struct{ i, j, k int }

func (a pairPos) before(b pairPos) bool {
	if a.i != b.i {
		return a.i < b.i
	}
	if a.j != b.j {
		return a.j < b.j
	}
	return a.k < b.k
}

// repairRec is a repair message pairCalls would insert.
type repairRec struct {
	pos   pairPos
	index int // its index in the repaired history
	call  openCall
	id    string
}

// streamPairing applies the tool-call pairing rule as pairCalls does, one message at a
// time, to find the error pairCalls would return. pairCalls refuses a repair whose
// message id is any history message's, even a later one: such a refusal is found when
// the later message comes, and taken if it is the first step pairCalls would fail at.
type streamPairing struct {
	ids      *hashedIDs // the history's ids read so far
	open     []openCall
	calls    *hashedIDs // callId → its functionCall (callRefValue)
	repairs  map[IDKey]repairRec
	nRepairs int
	err      error // the error of the earliest failing step met, at errPos
	errPos   pairPos
}

func newStreamPairing(ids *hashedIDs, open SpillOpener) *streamPairing {
	return &streamPairing{ids: ids, calls: newHashedIDs(open), repairs: map[IDKey]repairRec{}}
}

func (p *streamPairing) fail(pos pairPos, err error) {
	if p.err == nil || pos.before(p.errPos) {
		p.err, p.errPos = err, pos
	}
}

// message takes history[i], whose id is in p.ids already. After a failing step it only
// looks for repairs of earlier steps that m's id makes fail.
func (p *streamPairing) message(i int, m chat.Message) {
	if r, taken := p.repairs[p.ids.key(m.MessageID)]; taken {
		p.fail(r.pos, errRepairTaken(r.call, r.id))
	}
	if p.err != nil {
		return
	}
	if m.Role != chat.RoleTool {
		p.close(i)
	}
	for j, c := range m.Contents {
		if p.err != nil {
			return
		}
		p.content(i, j, m, c)
	}
}

// close records the repairs of the open calls, inserted before history[i].
func (p *streamPairing) close(i int) {
	for k, o := range p.open {
		id := RepairMessageID(o.msgID, o.callID)
		key, pos := p.ids.key(id), pairPos{i, -1, k}
		inHistory := p.ids.has(key)
		if _, repaired := p.repairs[key]; inHistory || repaired {
			p.fail(pos, errRepairTaken(o, id))
			return
		}
		p.nRepairs++
		p.repairs[key] = repairRec{pos: pos, index: i + p.nRepairs - 1, call: o, id: id}
	}
	p.open = p.open[:0]
}

func (p *streamPairing) content(i, j int, m chat.Message, c chat.Content) {
	at := callRef{i, j}
	switch c.Type {
	case chat.ContentFunctionCall:
		if first, dup := p.calls.put(p.calls.key(c.CallID), callRefValue(at)); dup {
			p.fail(pairPos{i, j, 0}, errCallIDTaken(at, callRefOf(first), c.CallID))
			return
		}
		p.open = append(p.open, openCall{at: at, msgID: m.MessageID, callID: c.CallID})
	case chat.ContentFunctionResult:
		for k, o := range p.open {
			if o.callID == c.CallID {
				p.open = append(p.open[:k], p.open[k+1:]...)
				return
			}
		}
		p.fail(pairPos{i, j, 0}, errOrphanResult(at, c.CallID))
	}
}

// documentCheck applies Validate and the tool-call pairing rule to a document whose
// history comes one message at a time, and gives the refusal Encode and Decode give:
// Validate's first (the members before the history, the history, the rest), then the
// pairing rule's, then that of Validate on the repaired document.
type documentCheck struct {
	ids     *hashedIDs
	pairing *streamPairing
	err     error // the first Validate refusal of a history message
}

// newDocumentCheck returns a documentCheck whose id sets spill to what open opens
// (nil: they stay in memory). Close it when done.
func newDocumentCheck(open SpillOpener) *documentCheck {
	ids := newHashedIDs(open)
	return &documentCheck{ids: ids, pairing: newStreamPairing(ids, open)}
}

// message checks history[i], m; it returns Validate's refusal of m, or an error of an
// id set's spill, after which it checks nothing more.
func (c *documentCheck) message(i int, m chat.Message) error {
	if c.err != nil {
		return c.err
	}
	if err := validateListed(msgRef{"history", i}, m, c.ids); err != nil {
		c.err = err
		return err
	}
	c.pairing.message(i, m)
	if err := c.spillErr(); err != nil {
		c.err = err
		return err
	}
	return nil
}

// spillErr is the first error of an id set's spill.
func (c *documentCheck) spillErr() error { return cmp.Or(c.ids.err, c.pairing.calls.err) }

// close closes the id sets' spills; it returns the first error of a spill.
func (c *documentCheck) close() error {
	return cmp.Or(c.ids.close(), c.pairing.calls.close())
}

// finish checks the members of d other than the history, whose messages c has seen,
// and returns the refusal or how many repairs the pairing rule makes.
func (c *documentCheck) finish(d Document) (repairs int, err error) {
	if err := d.validateHead(); err != nil {
		return 0, err
	}
	if c.err != nil {
		return 0, c.err
	}
	if err := d.validateAfterHistory(c.ids); err != nil {
		return 0, err
	}
	if err := c.spillErr(); err != nil {
		return 0, err
	}
	if err := c.pairing.err; err != nil {
		return 0, err
	}
	for p, m := range d.PendingTurns { // Validate of the repaired document
		if r, taken := c.pairing.repairs[c.ids.key(m.MessageID)]; taken {
			return 0, errIDTaken(msgRef{"pendingTurns", p}, m.MessageID, msgRef{"history", r.index})
		}
	}
	return c.pairing.nRepairs, nil
}
