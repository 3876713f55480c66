package cli

import "errors"

// runStatusOrient prints the Orient view (`ooda status --orient`).
func runStatusOrient(g *globals) error {
	return errors.New("status --orient: not built yet")
}
