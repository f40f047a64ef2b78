package chatstate

import (
	"hash/maphash"

	"github.com/agentchat/agentchat/chat"
)

// idKey is a 128-bit hash of an id: two ids of a document share one with a
// probability of about n²/2¹²⁹, nil for any document that fits on a disk.
type idKey [2]uint64

// hashedIDs is the idSet of a streamed document: it keeps hashes, not the ids, so that
// its size does not depend on the ids' length and it holds no message's memory.
type hashedIDs struct {
	seeds [2]maphash.Seed
	refs  map[idKey]int // history[i] as i, pendingTurns[i] as -1-i
}

func newHashedIDs() *hashedIDs {
	return &hashedIDs{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, refs: map[idKey]int{}}
}

func (s *hashedIDs) key(id string) idKey {
	return idKey{maphash.String(s.seeds[0], id), maphash.String(s.seeds[1], id)}
}

func (s *hashedIDs) add(id string, ref msgRef) (msgRef, bool) {
	k := s.key(id)
	if v, dup := s.refs[k]; dup {
		if v < 0 {
			return msgRef{"pendingTurns", -1 - v}, true
		}
		return msgRef{"history", v}, true
	}
	if ref.list == "history" {
		s.refs[k] = ref.i
	} else {
		s.refs[k] = -1 - ref.i
	}
	return ref, false
}

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
	calls    map[idKey]callRef // callId → its functionCall
	repairs  map[idKey]repairRec
	nRepairs int
	err      error // the error of the earliest failing step met, at errPos
	errPos   pairPos
}

func newStreamPairing(ids *hashedIDs) *streamPairing {
	return &streamPairing{ids: ids, calls: map[idKey]callRef{}, repairs: map[idKey]repairRec{}}
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
		_, inHistory := p.ids.refs[key]
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
		key := p.ids.key(c.CallID)
		if first, dup := p.calls[key]; dup {
			p.fail(pairPos{i, j, 0}, errCallIDTaken(at, first, c.CallID))
			return
		}
		p.calls[key] = at
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

func newDocumentCheck() *documentCheck {
	ids := newHashedIDs()
	return &documentCheck{ids: ids, pairing: newStreamPairing(ids)}
}

// message checks history[i], m; it returns Validate's refusal of m, after which it
// checks nothing more.
func (c *documentCheck) message(i int, m chat.Message) error {
	if c.err != nil {
		return c.err
	}
	if err := validateListed(msgRef{"history", i}, m, c.ids); err != nil {
		c.err = err
		return err
	}
	c.pairing.message(i, m)
	return nil
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
