package cli

import "errors"

// runStatusScorecard prints the Loop Scorecard (`ooda status --scorecard`).
func runStatusScorecard(g *globals, window int) error {
	return errors.New("status --scorecard: not built yet")
}
