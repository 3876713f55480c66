package secret

import (
	"slices"
	"strings"
	"testing"
)

func TestRedactMasksRegisteredValues(t *testing.T) {
	Register("ghp_abcdefghijklmnop", `quo"te-secret-value`)
	got := Redact("title: fix ghp_abcdefghijklmnop now")
	if strings.Contains(got, "ghp_abcdefghijklmnop") || !strings.Contains(got, Mask) {
		t.Fatalf("Redact = %q", got)
	}
	// The JSON-escaped form of a value is masked in file bytes too.
	b := RedactBytes([]byte(`{"t":"quo\"te-secret-value"}`))
	if strings.Contains(string(b), "te-secret") {
		t.Fatalf("RedactBytes = %s", b)
	}
	// Short values are not secrets: masking them would mangle all text.
	Register("true")
	if Redact("true") != "true" {
		t.Fatal("a value shorter than MinLen was masked")
	}
}

func TestChildEnvDropsCredentials(t *testing.T) {
	env := []string{"PATH=/bin", "GITHUB_TOKEN=x", "GH_TOKEN=y", "HOME=/root"}
	got := ChildEnv(env, nil, false)
	if !slices.Equal(got, []string{"PATH=/bin", "HOME=/root"}) {
		t.Fatalf("default = %v", got)
	}
	got = ChildEnv(env, []string{"GH_TOKEN"}, false)
	if !slices.Equal(got, []string{"PATH=/bin", "GH_TOKEN=y", "HOME=/root"}) {
		t.Fatalf("passthrough = %v", got)
	}
	if got := ChildEnv(env, nil, true); !slices.Equal(got, env) {
		t.Fatalf("inherit = %v", got)
	}
	RegisterEnv("OODA_TEST_WEBHOOK_SECRET")
	if !IsCredential("OODA_TEST_WEBHOOK_SECRET") {
		t.Fatal("registered name is not a credential")
	}
	if got := ChildEnv([]string{"OODA_TEST_WEBHOOK_SECRET=z"}, nil, false); len(got) != 0 {
		t.Fatalf("registered credential kept: %v", got)
	}
}

// chunkWriter records each Write it receives.
type chunkWriter struct{ writes []string }

func (c *chunkWriter) Write(p []byte) (int, error) {
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func (c *chunkWriter) String() string { return strings.Join(c.writes, "") }

func TestWriterRedacts(t *testing.T) {
	const tok = "ghp_writerTestToken0123456789"
	Register(tok)
	var out chunkWriter
	w := NewWriter(&out)
	// A whole line, a secret split across writes, a prompt without a
	// newline.
	w.Write([]byte("[Act] title: leak " + tok + "\n"))
	w.Write([]byte("split ghp_wri"))
	if got := out.String(); strings.Contains(got, "ghp_wri") {
		t.Fatalf("the start of a secret was written before the rest: %q", got)
	}
	w.Write([]byte("terTestToken0123456789 end\n"))
	w.Write([]byte(`Type "yes" to confirm: `))
	if got := out.String(); !strings.HasSuffix(got, `Type "yes" to confirm: `) {
		t.Fatalf("a prompt was held back: %q", got)
	}
	w.Write([]byte("g"))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "[Act] title: leak ***\nsplit *** end\nType \"yes\" to confirm: g"
	if got := out.String(); got != want || strings.Contains(got, tok) {
		t.Fatalf("written %q, want %q", got, want)
	}
}
