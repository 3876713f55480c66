package forge

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The configuration parser reads every file as git does: the same names
// and values as `git config --list` for what git accepts, an error for
// what it refuses.
func TestParseGitConfigAsGit(t *testing.T) {
	t.Parallel()
	cases := []string{
		"[core]\n\tbare = false\n",
		"[remote \"origin\"]\n\turl = git@github.com:a/b.git\n",
		"[remote \"Origin\"]\nurl=x\n[remote.Origin]\nURL = y\n",
		"[Remote \"o\\\"ri\\\\gin\"]\n url = a\n",
		"[a]b=c\n[d] e = f ; comment\n",
		"[a] k = \"quoted ; not a comment\" # comment\n",
		"[a]\n k = one \\\n two\n",
		"[a]\n k = \"in quotes \\\n continued\"\n",
		"[a]\n k =   inner   runs\t\tkept   \n",
		"[a]\n k = tab\\there\\nnewline\\bback\\\\slash\\\"quote\n",
		"[a]\n flag\n other-key = 1\n",
		"[a]\r\n k = crlf\r\n",
		"\xef\xbb\xbf[a]\n k = bom\n",
		"# only a comment\n; and another\n",
		"[a.b.c]\n k = dotted\n",
		"[a]\n k = v\n[a]\n k = again\n",
		"[a] k = no final newline",
		"[a]\n k = backslash at the end \\",
		"[a]\n k",
		"",
		// Refused by git.
		"[a]\n k = \"unterminated\n",
		"[a]\n k = bad \\x escape\n",
		"[a\n",
		"[a \"sub]\n",
		"[a \"sub\" ]\n",
		"[a b]\n",
		"[]\n k = v\n",
		"[a]\n 1k = v\n",
		"[a]\n k v\n",
		"[a]\n k_x = v\n",
		"[a_b]\n k = v\n",
		"\xef\xbb[a]\n",
	}
	dir := t.TempDir()
	for i, text := range cases {
		path := filepath.Join(dir, "c"+string(rune('a'+i)))
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "config", "-z", "--file", path, "--list")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		out, gitErr := cmd.Output()
		var want []string
		for _, e := range strings.Split(string(out), "\x00") {
			if e != "" {
				want = append(want, e)
			}
		}
		var got []string
		err := parseGitConfig([]byte(text), func(name, value string, hasValue bool) {
			if hasValue {
				got = append(got, name+"\n"+value)
			} else {
				got = append(got, name)
			}
		})
		switch {
		case gitErr != nil && err == nil:
			t.Errorf("%q: git refuses it (%v), the parser read %q", text, gitErr, got)
		case gitErr == nil && err != nil:
			t.Errorf("%q: git reads %q, the parser refuses it: %v", text, want, err)
		case gitErr == nil && !slices.Equal(got, want):
			t.Errorf("%q: parsed %q, git reads %q", text, got, want)
		}
	}
}
