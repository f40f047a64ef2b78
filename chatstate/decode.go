package chatstate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gowebpki/jcs"

	"github.com/agentchat/agentchat/chat"
)

// Decode reads a chat-state document. In order, it:
//
//  1. checks that b is one JSON object and reads its schemaVersion: a version this
//     reader does not know (newer, or not an integer) is refused, naming schemaVersion
//     and the versions it knows; an older one is verified and upgraded through the
//     upgrade table (Report.UpgradedFrom);
//  2. checks the JSON shape: no unknown or duplicate members (except inside states and
//     unknown contents), no missing ones, the right JSON kinds, RFC 3339 times;
//  3. verifies the digest on the document as read (missing or mismatching: refused,
//     naming digest, the message giving both digests);
//  4. validates the rules of chat-state-v1.md (Document.Validate);
//  5. applies the tool-call pairing rule: a functionCall without a result is repaired
//     (Report.Repairs), a result without a call or a callId used twice is refused.
//
// Every refusal is a *FieldError (errors.Is ErrInvalidDocument) naming the field. The
// document returned has its states and unknown contents in canonical form, and its
// Digest is the one Encode computes for it: the digest as read unless it was repaired,
// upgraded or not in canonical form.
func Decode(b []byte) (Document, Report, error) {
	doc, rep, _, err := decode(b, false)
	return doc, rep, err
}

// DecodeKeepingBytes is Decode that also returns, when it can, the bytes each history
// message was read from: raw[i] is doc.History[i] exactly as EncodeMessage writes it,
// a slice of b (do not modify b while raw is used). raw is nil unless b is exactly
// what Encode writes (Decode's fast path, which proves each message's bytes by
// encoding it again) and Decode changed no message (no repair). A caller that writes
// the messages in canonical form elsewhere (the message store's history pages) can
// copy raw[i] instead of encoding doc.History[i] again.
func DecodeKeepingBytes(b []byte) (doc Document, rep Report, raw [][]byte, err error) {
	return decode(b, true)
}

// decode is Decode, keeping the messages' bytes when keep (DecodeKeepingBytes).
func decode(b []byte, keep bool) (Document, Report, [][]byte, error) {
	var raw [][]byte
	var keepRaw *[][]byte
	if keep {
		keepRaw = &raw
	}
	doc, exact, upgradedFrom, err := read(b, keepRaw)
	if err != nil {
		return Document{}, Report{}, nil, err
	}
	rep := Report{UpgradedFrom: upgradedFrom}
	if err := doc.Validate(); err != nil {
		return Document{}, rep, nil, err
	}
	if doc, rep.Repairs, err = repairCalls(doc); err != nil {
		return Document{}, Report{UpgradedFrom: upgradedFrom}, nil, err
	}
	if !exact || len(rep.Repairs) > 0 {
		if _, doc.Digest, err = encode(doc); err != nil {
			return Document{}, rep, nil, err
		}
	}
	if len(rep.Repairs) > 0 || len(raw) != len(doc.History) {
		raw = nil
	}
	return doc, rep, raw, nil
}

// read does steps 1 to 3 of Decode. exact reports that doc encodes to the canonical
// form of b, so that doc.Digest is its digest; upgradedFrom is the version b had when it
// was upgraded.
func read(b []byte, raw *[][]byte) (doc Document, exact bool, upgradedFrom int, err error) {
	// The fast path first: a document exactly as Encode writes it, of this version,
	// needs neither the version probe nor the general path.
	if doc, ok := decodeCanonical(b, raw); ok && doc.SchemaVersion == SchemaVersion {
		return doc, true, 0, nil
	}
	if raw != nil {
		*raw = nil // only the fast path proves the messages' bytes
	}
	v, err := readVersion(b)
	if err != nil {
		return Document{}, false, 0, err
	}
	if v == SchemaVersion {
		if doc, ok := decodeRelaid(b); ok {
			return doc, true, 0, nil
		}
	} else {
		if b, err = upgradeFrom(b, v); err != nil {
			return Document{}, false, 0, err
		}
		upgradedFrom = v
	}
	doc, err = decodeGeneral(b, v == SchemaVersion)
	return doc, false, upgradedFrom, err
}

// decodeRelaid reads b when its RFC 8785 form is exactly what Encode writes: a document
// Encode wrote, indented or with its members in another order, or one another program
// wrote the same way. That also proves its digest right, since the canonical form of b
// without "digest" is that form without the "digest" member.
func decodeRelaid(b []byte) (Document, bool) {
	c, err := jcs.Transform(b)
	if err != nil || checkNumbers(b) != nil {
		return Document{}, false
	}
	return decodeCanonical(c, nil)
}

// readVersion checks that b is one JSON object and returns its schemaVersion if this
// reader knows it.
func readVersion(b []byte) (int, error) {
	var head struct {
		SchemaVersion json.RawMessage `json:"schemaVersion"`
	}
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) > 0 && t[0] != '{' && json.Valid(b) {
		return 0, fieldErr("", "is "+jsonKind(t[0])+", not a JSON object")
	}
	if err := json.Unmarshal(b, &head); err != nil {
		if _, terr := parseTree(b); terr != nil {
			return 0, terr // names where the syntax error is
		}
		return 0, fieldErr("", "is not a chat-state document: "+err.Error())
	}
	raw := string(head.SchemaVersion)
	if raw == "" {
		return 0, fieldErr("schemaVersion", "is missing")
	}
	v, err := strconv.Atoi(raw)
	if err != nil {
		return 0, fieldErr("schemaVersion", "is "+clip(raw)+", not an integer; this reader knows versions "+knownVersions())
	}
	if _, old := upgrades[v]; v != SchemaVersion && !old {
		return 0, fieldErr("schemaVersion", "is "+raw+", a version this reader does not know; it knows versions "+knownVersions())
	}
	return v, nil
}

// decodeCanonical reads b when it is exactly what Encode writes, which proves it is in
// canonical form with its digest right: the fast path.
//
// It proves it as encode(doc) == b would, in three parts run side by side: each history
// message, encoded as it is read (by a goroutine of its own, fed in batches), against
// the bytes it was read from; the rest of the document, encoded without its history and
// digest, against b with the history's array emptied; and the digest against the
// SHA-256 of b around its digest member (another goroutine). The history's brackets and
// commas are checked by the reader. So the document is never encoded whole, and its
// reading and checking take two cores where there are two.
//
// When raw is not nil, it is set to the bytes each history message was read from.
func decodeCanonical(b []byte, raw *[][]byte) (Document, bool) {
	b = bytes.TrimSpace(b)
	if !bytes.HasPrefix(b, []byte(`{"channels":[`)) { // how every canonical document starts
		return Document{}, false
	}
	// The history, nearly all of the bytes, is read by readHistory rather than by
	// encoding/json; the comparisons below catch anything it reads differently.
	check := startMessageCheck()
	sum := make(chan []byte, 1)
	history, rest, digestAt, err := readHistory(b, func(at int) {
		if at+digestMemberLen > len(b) {
			sum <- nil
			return
		}
		go func() {
			h := sha256.New()
			h.Write(b[:at])
			h.Write(b[at+digestMemberLen:])
			sum <- h.Sum(nil)
		}()
	}, func(m chat.Message, from []byte) {
		check.add(m, from)
		if raw != nil {
			*raw = append(*raw, from)
		}
	})
	historyOK := check.wait()
	if err != nil || !historyOK {
		return Document{}, false
	}
	var fast struct {
		Document
		PendingTurns canonicalMessages `json:"pendingTurns"`
	}
	if err := json.Unmarshal(rest, &fast); err != nil {
		return Document{}, false
	}
	doc := fast.Document
	doc.History, doc.PendingTurns = nil, fast.PendingTurns
	e := encoder{b: make([]byte, 0, len(rest))}
	if err := e.document(doc); err != nil || e.digestAt != digestAt || len(e.b) != len(rest) ||
		!bytes.Equal(e.b[:digestAt], rest[:digestAt]) || !bytes.Equal(e.b[digestAt+digestMemberLen:], rest[digestAt+digestMemberLen:]) {
		return Document{}, false
	}
	h := <-sum
	if h == nil || string(rest[digestAt:digestAt+digestMemberLen]) != `"digest":"`+digestPrefix+hex.EncodeToString(h)+`",` {
		return Document{}, false
	}
	doc.History = history
	return doc, true
}

// messageCheck encodes messages on a goroutine of its own and compares each with the
// bytes it was read from: add queues one, wait reports whether all were equal.
type messageCheck struct {
	batch     []checked
	batches   chan []checked
	equal     chan bool
	batchSize int
}

type checked struct {
	m    chat.Message
	from []byte
}

func startMessageCheck() *messageCheck {
	c := &messageCheck{batches: make(chan []checked, 8), equal: make(chan bool, 1), batchSize: 128}
	go func() {
		e := encoder{}
		equal := true
		for batch := range c.batches {
			for _, m := range batch {
				if !equal {
					break // drain: the reader goes on to its end
				}
				e.b = e.b[:0]
				equal = e.message("history", 0, m.m) == nil && bytes.Equal(e.b, m.from)
			}
		}
		c.equal <- equal
	}()
	return c
}

func (c *messageCheck) add(m chat.Message, from []byte) {
	c.batch = append(c.batch, checked{m, from})
	if len(c.batch) == c.batchSize {
		c.batches <- c.batch
		c.batch = make([]checked, 0, c.batchSize)
	}
}

// wait sends the last batch and returns whether every message encoded to its bytes.
func (c *messageCheck) wait() bool {
	if len(c.batch) > 0 {
		c.batches <- c.batch
		c.batch = nil
	}
	close(c.batches)
	return <-c.equal
}

// decodeGeneral reads any document of the current version: it checks the shape, reads
// the document, puts its states and unknown contents in canonical form and, when
// checkDigest, verifies its digest over b as read.
func decodeGeneral(b []byte, checkDigest bool) (Document, error) {
	if !utf8.Valid(b) {
		return Document{}, fieldErr("", "is not valid UTF-8")
	}
	root, err := parseTree(b)
	if err != nil {
		return Document{}, err
	}
	if err := checkShape(root, checkDigest); err != nil {
		return Document{}, err
	}
	var doc Document
	if err := json.Unmarshal(b, &doc); err != nil {
		return Document{}, fieldErr("", "cannot be read: "+err.Error())
	}
	if err := canonicalizeRaw(&doc); err != nil {
		return Document{}, err
	}
	if checkDigest {
		if err := verifyDigest(b, doc.Digest); err != nil {
			return Document{}, err
		}
	}
	return doc, nil
}

// canonicalizeRaw puts the states and unknown contents of doc in canonical form.
func canonicalizeRaw(doc *Document) error {
	for i := range doc.Channels {
		if err := canonicalize(member(index("channels", i), "channelState"), &doc.Channels[i].ChannelState); err != nil {
			return err
		}
	}
	if err := canonicalize("strategies.selection.state", &doc.Strategies.Selection.State); err != nil {
		return err
	}
	if err := canonicalize("strategies.termination.state", &doc.Strategies.Termination.State); err != nil {
		return err
	}
	for _, list := range []struct {
		name string
		ms   []chat.Message
	}{{"history", doc.History}, {"pendingTurns", doc.PendingTurns}} {
		for i, m := range list.ms {
			for j := range m.Contents {
				if c := &m.Contents[j]; !c.Known() {
					if err := canonicalize(contentPath(list.name, i, j), &c.Raw); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func canonicalize(field string, raw *json.RawMessage) error {
	c, err := canonicalObject(*raw)
	if err != nil {
		return fieldErr(field, err.Error())
	}
	*raw = c
	return nil
}

// verifyDigest checks that stated is the digest of b as read: "sha256:" + the hex
// SHA-256 of the RFC 8785 form of b without its "digest" member.
func verifyDigest(b []byte, stated string) error {
	if !validDigest(stated) {
		return fieldErr("digest", strconv.Quote(clip(stated))+` is not "sha256:" followed by 64 lowercase hex digits`)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return fieldErr("", "is not a JSON object: "+err.Error())
	}
	delete(members, "digest")
	plain, err := json.Marshal(members)
	if err != nil {
		return fieldErr("", "cannot be re-encoded: "+err.Error())
	}
	canonical, err := jcs.Transform(plain)
	if err != nil {
		return fieldErr("", "cannot be put in canonical form (RFC 8785): "+err.Error())
	}
	sum := sha256.Sum256(canonical)
	if computed := digestPrefix + hex.EncodeToString(sum[:]); computed != stated {
		return fieldErr("digest", "does not match the document: it says "+stated+", the document hashes to "+computed)
	}
	return nil
}

// validDigest reports whether d is "sha256:" followed by 64 lowercase hex digits.
func validDigest(d string) bool {
	hexPart, ok := strings.CutPrefix(d, digestPrefix)
	if !ok || len(hexPart) != 64 {
		return false
	}
	for _, c := range []byte(hexPart) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
