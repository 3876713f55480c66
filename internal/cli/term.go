package cli

import (
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ooda-loop/ooda/internal/present"
)

// style is how the views draw on w. A terminal gets box drawing and,
// unless --no-color or a non-empty NO_COLOR (as no-color.org asks) says
// otherwise, colour. The width is COLUMNS when it is a positive number
// (so a script or a test can ask for 80 or 120 columns), else the
// terminal's own, else unknown (0: nothing is cut).
func (g *globals) style(w io.Writer) present.Style {
	var s present.Style
	// Output goes through a redacting writer; the terminal is what it
	// writes on.
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if ok && isTerminalFd(f.Fd()) {
		s.Terminal = true
		s.Color = !g.noColor && os.Getenv("NO_COLOR") == ""
		s.Width = terminalColumns(f.Fd())
	}
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 && n <= 10000 {
		s.Width = n
	}
	return s
}
