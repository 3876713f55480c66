package cli

import (
	"os"
	"testing"

	"github.com/ooda-loop/ooda/internal/secret"
)

// Every command's output goes through a redacting writer; the views must
// still see the terminal beneath it, or no box and no colour ever show.
func TestStyleSeesTheTerminalThroughTheRedactingWriter(t *testing.T) {
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer tty.Close()
	if !isTerminalFd(tty.Fd()) {
		t.Skip("/dev/ptmx is not a terminal on this system")
	}
	t.Setenv("NO_COLOR", "")
	t.Setenv("COLUMNS", "")
	g := &globals{}
	s := g.style(secret.NewWriter(tty))
	if !s.Terminal || !s.Color {
		t.Fatalf("style through secret.Writer on a tty = %+v, want Terminal and Color", s)
	}
	t.Setenv("NO_COLOR", "1")
	if s := g.style(secret.NewWriter(tty)); s.Color || !s.Terminal {
		t.Errorf("NO_COLOR=1: %+v", s)
	}
	t.Setenv("NO_COLOR", "")
	g.noColor = true
	if s := g.style(secret.NewWriter(tty)); s.Color {
		t.Errorf("--no-color: %+v", s)
	}
	t.Setenv("COLUMNS", "80")
	if s := g.style(secret.NewWriter(tty)); s.Width != 80 {
		t.Errorf("COLUMNS=80: width %d", s.Width)
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if s := g.style(secret.NewWriter(f)); s.Terminal || s.Color {
		t.Errorf("a file is no terminal: %+v", s)
	}
}
