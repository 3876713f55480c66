package cli

import (
	"fmt"
	"io"

	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/safetext"
)

// runStatusOrient prints the Orient view (`ooda status --orient`): the
// learning side of the loop, from its own files only. Like the dashboard
// it only reads, and names each corrupt file on stderr while the view
// shows that section empty.
func runStatusOrient(g *globals) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	st, err := g.store(cfg)
	if err != nil {
		return err
	}
	doc := present.BuildOrient(st, cfg)
	for _, p := range doc.Corrupt {
		fmt.Fprintf(g.stderr, "[WARN] corrupt state file: %s\n", safetext.Text(p))
	}
	if g.json {
		return g.printJSON(doc)
	}
	_, err = io.WriteString(g.stdout, present.RenderOrient(doc, g.style(g.stdout)))
	return err
}
