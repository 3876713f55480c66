package cli

import "errors"

// runStatusShare prints the latest cycle's Cycle Card (`ooda status --share`).
func runStatusShare(g *globals, plain bool) error {
	return errors.New("status --share: not built yet")
}
