package cli

import (
	"fmt"
	"io"

	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/safetext"
)

// runStatusScorecard prints the Loop Scorecard (`ooda status
// --scorecard`): the last window cycles, all of them when window is 0.
// Like every status view it only reads; a corrupt file is named on
// stderr and scored as its default.
func runStatusScorecard(g *globals, window int) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	st, err := g.store(cfg)
	if err != nil {
		return err
	}
	sc := present.BuildScorecard(cfg, st, window)
	for _, p := range sc.Corrupt {
		fmt.Fprintf(g.stderr, "[WARN] corrupt state file: %s\n", safetext.Text(p))
	}
	if g.json {
		return g.printJSON(sc)
	}
	_, err = io.WriteString(g.stdout, present.RenderScorecard(sc, g.style(g.stdout)))
	return err
}
