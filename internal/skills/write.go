package skills

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ooda-loop/ooda/internal/state"
)

// writeJSON writes v, indented, to a file of the project (a built-in's
// domain state file or report) through the store: atomically, contained
// in the project (a symlink or a path out of it is refused), with the
// known secrets masked. Errors name the skill and the file.
func writeJSON(store *state.Store, skill, path string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("%s: %s: %w", skill, path, err)
	}
	if err := store.WriteProjectFile(path, b.Bytes()); err != nil {
		return fmt.Errorf("%s: not writing %s: %w", skill, path, err)
	}
	return nil
}
