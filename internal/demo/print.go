package demo

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentchat/agentchat/chat"
)

// printer writes the demo's narration.
type printer struct{ w io.Writer }

func (p *printer) title(s string) { fmt.Fprintf(p.w, "\n== %s\n", s) }

func (p *printer) kv(k, format string, a ...any) {
	fmt.Fprintf(p.w, "  %-9s %s\n", k+":", fmt.Sprintf(format, a...))
}

func (p *printer) line(format string, a ...any) { fmt.Fprintf(p.w, format+"\n", a...) }

func (p *printer) note(format string, a ...any) {
	fmt.Fprintf(p.w, "  -> %s\n", fmt.Sprintf(format, a...))
}

func (p *printer) message(m chat.Message) {
	who := m.AuthorName
	if who == "" {
		who = string(m.Role)
	}
	fmt.Fprintf(p.w, "  %-9s %s\n", who+":", strings.ReplaceAll(m.Text(), "\n", "\n            "))
}

func (p *printer) messages(ms []chat.Message) {
	for _, m := range ms {
		p.message(m)
	}
}
