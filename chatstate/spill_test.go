package chatstate

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// mapSpill is an IDSpill in memory: hashedIDs' spilled path without a file (package
// idspill checks its SQLite spill against a map the same way). fail, when set, is
// returned by the Put that makes its n-th entry.
type mapSpill struct {
	m      map[IDKey]int64
	count  *spillCount
	failAt int
}

type spillCount struct{ opened, closed, puts int }

func (s *mapSpill) Put(k IDKey, v int64) (int64, bool, error) {
	s.count.puts++
	if first, ok := s.m[k]; ok {
		return first, true, nil
	}
	if s.failAt > 0 && len(s.m)+1 == s.failAt {
		return 0, false, errors.New("disk full")
	}
	s.m[k] = v
	return v, false, nil
}

func (s *mapSpill) Get(k IDKey) (int64, bool, error) {
	v, ok := s.m[k]
	return v, ok, nil
}

func (s *mapSpill) Close() error {
	s.count.closed++
	return nil
}

// spillAt lowers spillAfter to n for the test and returns an opener of mapSpills
// (failing at their failAt-th entry when failAt > 0) and their count.
func spillAt(t *testing.T, n, failAt int) (SpillOpener, *spillCount) {
	was := spillAfter
	spillAfter = n
	t.Cleanup(func() { spillAfter = was })
	count := &spillCount{}
	return func() (IDSpill, error) {
		count.opened++
		return &mapSpill{m: map[IDKey]int64{}, count: count, failAt: failAt}, nil
	}, count
}

// With the ids past the first 4 of each kind spilled, the Decoder and the Encoder read
// and write generated documents (valid, and broken in every way Decode and Encode
// refuse: ids and call ids taken twice, repairs whose ids are taken, anywhere in the
// history) exactly as Decode and Encode do, errors included, and close every spill
// they open.
func TestSpilledIDsChangeNothing(t *testing.T) {
	open, count := spillAt(t, 4, 0)
	for seed := range uint64(300) {
		d, _ := seededDocument(seed, 11)
		name := "seed " + strconv.FormatUint(seed, 10)
		sameAsEncodeSpilled(t, name, d, open)
		if b, _, err := encode(d); err == nil {
			sameAsDecodeSpilled(t, name, b, open)
		}
	}
	if count.opened < 300 || count.puts < 10_000 {
		t.Errorf("%d spills opened, %d puts: the test hardly spilled", count.opened, count.puts)
	}
	if count.closed != count.opened {
		t.Errorf("%d spills opened, %d closed", count.opened, count.closed)
	}
}

// A spill that fails fails the Decoder's Header and the Encoder's Encode with its
// error, wrapped and not a *FieldError, and is closed.
func TestASpillErrorFailsTheDocument(t *testing.T) {
	open, count := spillAt(t, 4, 3)
	d := genDocument(7, 60)
	b, _, err := encode(d)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = streamDecodeSpilled(b, open)
	var fe *FieldError
	if err == nil || !strings.Contains(err.Error(), "disk full") || errors.As(err, &fe) {
		t.Errorf("Decoder: %v, want the spill's error", err)
	}
	_, _, err = streamEncodeSpilled(d, open)
	if err == nil || !strings.Contains(err.Error(), "disk full") || errors.As(err, &fe) {
		t.Errorf("Encoder: %v, want the spill's error", err)
	}
	if count.opened == 0 || count.closed != count.opened {
		t.Errorf("%d spills opened, %d closed", count.opened, count.closed)
	}
}
