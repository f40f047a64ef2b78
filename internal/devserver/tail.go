package devserver

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
)

// tailBuffer is an io.Writer that keeps only the last max bytes written.
type tailBuffer struct {
	mu        sync.Mutex
	max       int
	buf       []byte
	truncated bool // the first bytes of buf may be the end of a cut line
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.truncated = true
	}
	return len(p), nil
}

// lastLines returns at most n trailing lines of what was written.
func (t *tailBuffer) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.truncated {
		return lastLines(dropCutLine(t.buf), n)
	}
	return lastLines(t.buf, n)
}

// lastLines returns at most n trailing non-empty lines of b, joined by newlines.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var kept []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			kept = append(kept, l)
		}
	}
	if len(kept) > n {
		kept = kept[len(kept)-n:]
	}
	return strings.Join(kept, "\n")
}

// dropCutLine drops b's first line, which a cut may have left partial.
func dropCutLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return nil
}

// fileTail returns at most n trailing lines of the file at path, reading only
// from byte offset from on and at most the last 64 KiB.
func fileTail(path string, from int64, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	const maxRead = 64 << 10
	start := from
	if fi.Size()-start > maxRead {
		start = fi.Size() - maxRead
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return ""
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, f); err != nil {
		return ""
	}
	if start > from {
		return lastLines(dropCutLine(b.Bytes()), n)
	}
	return lastLines(b.Bytes(), n)
}
