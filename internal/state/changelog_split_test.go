package state

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// splitChangelogByLines is the splitChangelog that built each block line
// by line, kept as the oracle of the one that slices the text.
func splitChangelogByLines(s string) []clBlock {
	lines := strings.SplitAfter(s, "\n")
	fences := 0
	for _, ln := range lines {
		if isFence(ln) {
			fences++
		}
	}
	var blocks []clBlock
	in, seen := false, 0
	for _, ln := range lines {
		if ln == "" {
			continue
		}
		if isFence(ln) {
			seen++
			if in || seen < fences || fences%2 == 0 {
				in = !in
			}
		}
		if lvl := headingLevel(ln); !in && (lvl == 1 || lvl == 2) {
			blocks = append(blocks, clBlock{cycle: strings.HasPrefix(ln, "## Cycle #"), h2: lvl == 2})
		} else if len(blocks) == 0 {
			blocks = append(blocks, clBlock{})
		}
		blocks[len(blocks)-1].text += ln
	}
	return blocks
}

// changelogSeeds are CHANGELOG.md texts of every shape the compat tests
// and the fixtures hold, and a long one.
func changelogSeeds(tb testing.TB) []string {
	seeds := []string{"", "\n", "# CHANGELOG\n", "# CHANGELOG\n\n## Cycle #1 -- x\n- a\n\n## Notes\ntext", "no newline at end",
		"```\n## Cycle #1\n```\n## Cycle #2\nb\r\n\r\n---\r\n## Cycle #3", "~~~\n## Cycle #9\n# H1\n## Cycle #1\n",
		"#nohash\n## Cycle #1\n###### h6\n####### h7\n## \n##\n"}
	paths, _ := filepath.Glob(filepath.Join(fixturesDir, "*", "agent", "state", "evolve", ChangelogFile))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			seeds = append(seeds, string(b))
		}
	}
	return append(seeds, string(benchFiles(2000)["evolve/"+ChangelogFile]))
}

// The text is cut into the same blocks as by the line-by-line oracle.
func FuzzSplitChangelog(f *testing.F) {
	for _, s := range changelogSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := splitChangelog(s), splitChangelogByLines(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("splitChangelog(%q) =\n%+v\nthe oracle\n%+v", s, got, want)
		}
	})
}
