package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Target is a bound on a row's ratio (agentchat ÷ floor). The zero Target is none.
type Target struct {
	// AtMost: the ratio must be ≤ Limit; else ≥ Limit.
	AtMost bool
	Limit  float64
}

// AtMost and AtLeast make targets.
func AtMost(limit float64) Target  { return Target{AtMost: true, Limit: limit} }
func AtLeast(limit float64) Target { return Target{Limit: limit} }

// IsZero reports whether t is no target.
func (t Target) IsZero() bool { return t.Limit == 0 }

func (t Target) String() string {
	switch {
	case t.IsZero():
		return "-"
	case t.AtMost:
		return fmt.Sprintf("<= %g", t.Limit)
	default:
		return fmt.Sprintf(">= %g", t.Limit)
	}
}

// Met reports whether ratio meets t; true for no target.
func (t Target) Met(ratio float64) bool {
	switch {
	case t.IsZero():
		return true
	case math.IsNaN(ratio):
		return false
	case t.AtMost:
		return ratio <= t.Limit
	default:
		return ratio >= t.Limit
	}
}

// Row is one line of the table: a figure of agentchat beside the same figure of the
// floor, both in the unit its name gives. A row's group is the --rows name that
// produces it.
type Row struct {
	Group  string
	Name   string
	Value  float64 // agentchat
	Floor  float64
	Target Target
}

// Ratio is Value ÷ Floor; NaN when either is missing or the floor is zero.
func (r Row) Ratio() float64 {
	if r.Floor == 0 || math.IsNaN(r.Floor) || math.IsNaN(r.Value) {
		return math.NaN()
	}
	return r.Value / r.Floor
}

// Result is "pass", "FAIL", "-" (no target) or, in short mode, "(short)": short runs
// check that each row runs, not its timings.
func (r Row) Result(short bool) string {
	switch {
	case r.Target.IsZero():
		return "-"
	case short:
		return "(short)"
	case r.Target.Met(r.Ratio()):
		return "pass"
	default:
		return "FAIL"
	}
}

// Table is the benchmark's result.
type Table struct {
	Short bool
	Rows  []Row
	// Notes are printed under the table: sizes, the server, profile files.
	Notes []string
}

// Add appends rows.
func (t *Table) Add(rows ...Row) { t.Rows = append(t.Rows, rows...) }

// Note appends a note line.
func (t *Table) Note(format string, args ...any) {
	t.Notes = append(t.Notes, fmt.Sprintf(format, args...))
}

// Missed returns the rows whose target is missed (none in short mode).
func (t *Table) Missed() []Row {
	if t.Short {
		return nil
	}
	var out []Row
	for _, r := range t.Rows {
		if !r.Target.Met(r.Ratio()) {
			out = append(out, r)
		}
	}
	return out
}

var tableHeader = []string{"row", "agentchat", "floor", "ratio", "target", "result"}

// cells returns the table's cells, header first.
func (t *Table) cells() [][]string {
	out := [][]string{tableHeader}
	for _, r := range t.Rows {
		out = append(out, []string{r.Name, number(r.Value), number(r.Floor), ratio(r.Ratio()),
			r.Target.String(), r.Result(t.Short)})
	}
	return out
}

// WriteText writes the table with aligned columns, then the notes.
func (t *Table) WriteText(w io.Writer) error {
	cells := t.cells()
	width := make([]int, len(tableHeader))
	for _, row := range cells {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	for n, row := range cells {
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		b.WriteString("\n")
		if n == 0 {
			total := len(width)*2 - 2
			for _, wd := range width {
				total += wd
			}
			b.WriteString(strings.Repeat("-", total) + "\n")
		}
	}
	for _, n := range t.Notes {
		b.WriteString(n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the table as a Markdown table, then the notes as a list.
func (t *Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	for n, row := range t.cells() {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		if n == 0 {
			b.WriteString("|---" + strings.Repeat("|---:", len(row)-1) + "|\n")
		}
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			b.WriteString("- " + n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// number formats a figure with three significant digits or so; "n/a" when missing.
func number(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func ratio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}
