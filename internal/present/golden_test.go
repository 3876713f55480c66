package present

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites the golden files from what the views render now:
// go test ./internal/present -update
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// golden compares got with testdata/NAME.golden, or writes it under
// -update. A difference prints both, so a reviewer sees what changed.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%s: %v (run go test ./internal/present -update to create it)", p, err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the rendered view:\n--- want\n%s\n--- got\n%s", p, want, got)
	}
}
