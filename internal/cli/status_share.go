package cli

import (
	"fmt"
	"io"

	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/safetext"
)

// shareDoc is the --json document of `ooda status --share`: the card's
// fields, as `ooda cycle --json` gives them; null before the first cycle.
type shareDoc struct {
	Card *present.Card `json:"card"`
}

// runStatusShare prints the latest cycle's Cycle Card (`ooda status --share`).
// It is the card the cycle printed, rebuilt from the state as the cycle
// wrote it; it only reads. plain forces the layout without box drawing,
// emoji or colour, for pasting.
func runStatusShare(g *globals, plain bool) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	st, err := g.store(cfg)
	if err != nil {
		return err
	}
	v := present.BuildCard(cfg, st)
	for _, p := range v.Corrupt {
		fmt.Fprintf(g.stderr, "[WARN] corrupt state file: %s\n", safetext.Text(p))
	}
	if g.json {
		return g.printJSON(shareDoc{Card: v.Card})
	}
	_, err = io.WriteString(g.stdout, present.RenderCard(v.Card, g.style(g.stdout), plain))
	return err
}
