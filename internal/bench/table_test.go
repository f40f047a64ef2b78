package bench

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRowResult(t *testing.T) {
	tests := []struct {
		name  string
		row   Row
		short bool
		want  string
	}{
		{"at most, met", Row{Value: 12, Floor: 10, Target: AtMost(1.3)}, false, "pass"},
		{"at most, missed", Row{Value: 14, Floor: 10, Target: AtMost(1.3)}, false, "FAIL"},
		{"at least, met", Row{Value: 9, Floor: 10, Target: AtLeast(0.8)}, false, "pass"},
		{"at least, missed", Row{Value: 7, Floor: 10, Target: AtLeast(0.8)}, false, "FAIL"},
		{"no target", Row{Value: 70, Floor: 10}, false, "-"},
		{"missing floor", Row{Value: 7, Floor: math.NaN(), Target: AtMost(2)}, false, "FAIL"},
		{"short", Row{Value: 70, Floor: 10, Target: AtMost(1.3)}, true, "(short)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.row.Result(tt.short))
		})
	}
}

func TestTableWrite(t *testing.T) {
	tb := &Table{}
	tb.Add(Row{Name: "Turn p50 (ms)", Value: 52.25, Floor: 48, Target: AtMost(1.3)},
		Row{Name: "Document size (MB)", Value: 7.1, Floor: math.NaN()})
	tb.Note("a note")
	assert.Len(t, tb.Missed(), 0)

	var text strings.Builder
	require.NoError(t, tb.WriteText(&text))
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	require.Len(t, lines, 5)
	assert.Regexp(t, `^row\s+agentchat\s+floor\s+ratio\s+target\s+result$`, lines[0])
	assert.Regexp(t, `^Turn p50 \(ms\)\s+52\.2\s+48\.0\s+1\.09\s+<= 1\.3\s+pass$`, lines[2])
	assert.Regexp(t, `^Document size \(MB\)\s+7\.10\s+n/a\s+n/a\s+-\s+-$`, lines[3])
	assert.Equal(t, "a note", lines[4])

	var md strings.Builder
	require.NoError(t, tb.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "| Turn p50 (ms) | 52.2 | 48.0 | 1.09 | <= 1.3 | pass |\n")
	assert.Contains(t, md.String(), "|---|---:|---:|---:|---:|---:|\n")
	assert.Contains(t, md.String(), "- a note\n")
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	assert.Equal(t, 50.0, percentile(ds, 50))
	assert.Equal(t, 99.0, percentile(ds, 99))
	assert.Equal(t, 100.0, percentile(ds, 100))
	assert.Equal(t, 1.0, percentile(ds, 0.1))
	assert.True(t, math.IsNaN(percentile(nil, 50)))
	assert.Equal(t, []time.Duration{time.Millisecond, 2 * time.Millisecond}, scale([]time.Duration{3 * time.Millisecond, 6 * time.Millisecond}, 3))
	assert.Equal(t, "1,000", itoa(1000))
	assert.Equal(t, "20", itoa(20))
	assert.Equal(t, "1,234,567", itoa(1234567))
}
