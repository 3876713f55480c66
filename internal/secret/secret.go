// Package secret knows the credentials ooda itself uses, keeps them out of
// the environment of the processes it starts, and replaces their values
// with "***" in everything it writes: state files, the CHANGELOG, the cycle
// log, notifications and the terminal.
//
// A skill, a judge or a forge may echo a token into text that ooda then
// records (an action title, a summary, a branch name). Redacting at every
// writer, rather than trusting each source, is what keeps a token out of a
// committed file whatever the source did.
package secret

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Mask replaces every known secret value.
const Mask = "***"

// MinLen is the shortest value treated as a secret: a shorter one ("1",
// "true") would mask ordinary text everywhere and protects nothing.
const MinLen = 8

// DefaultNames are the environment variables holding the forge credentials
// ooda reads itself (docs/forge.md).
var DefaultNames = []string{"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}

var (
	mu       sync.RWMutex
	once     sync.Once
	names    = map[string]bool{}
	values   = map[string]bool{}
	replacer *strings.Replacer
)

func initDefaults() {
	once.Do(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range DefaultNames {
			names[n] = true
			addValueLocked(os.Getenv(n))
		}
		rebuildLocked()
	})
}

// RegisterEnv marks environment variables as credentials: they are removed
// from children's environments by default and their current values are
// redacted.
func RegisterEnv(envNames ...string) {
	initDefaults()
	mu.Lock()
	defer mu.Unlock()
	for _, n := range envNames {
		if n == "" {
			continue
		}
		names[n] = true
		addValueLocked(os.Getenv(n))
	}
	rebuildLocked()
}

// Register adds secret values (a token obtained from `gh auth token`, a
// resolved webhook URL). Values shorter than MinLen are ignored.
func Register(vals ...string) {
	initDefaults()
	mu.Lock()
	defer mu.Unlock()
	changed := false
	for _, v := range vals {
		changed = addValueLocked(v) || changed
	}
	// A notifier registers the values it resolves on every send; most are
	// known already, and rebuilding the replacer each time would be waste.
	if changed {
		rebuildLocked()
	}
}

// addValueLocked records v and reports whether it was new.
func addValueLocked(v string) bool {
	v = strings.TrimSpace(v)
	if len(v) < MinLen || values[v] {
		return false
	}
	values[v] = true
	// The same value as it appears inside a JSON string, when escaping
	// changes it, so a file's bytes are redacted too.
	if b, err := json.Marshal(v); err == nil {
		if e := string(b[1 : len(b)-1]); e != v {
			values[e] = true
		}
	}
	return true
}

func rebuildLocked() {
	vs := make([]string, 0, len(values))
	for v := range values {
		vs = append(vs, v)
	}
	// Longest first, so a secret that contains another is masked whole.
	sort.Slice(vs, func(i, j int) bool {
		if len(vs[i]) != len(vs[j]) {
			return len(vs[i]) > len(vs[j])
		}
		return vs[i] < vs[j]
	})
	if len(vs) == 0 {
		replacer = nil
		return
	}
	pairs := make([]string, 0, 2*len(vs))
	for _, v := range vs {
		pairs = append(pairs, v, Mask)
	}
	replacer = strings.NewReplacer(pairs...)
}

// Names lists the credential variables, sorted.
func Names() []string {
	initDefaults()
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// IsCredential reports whether an environment variable is one of ooda's
// credentials.
func IsCredential(name string) bool {
	initDefaults()
	mu.RLock()
	defer mu.RUnlock()
	return names[name]
}

// Redact replaces every known secret value in s with Mask.
func Redact(s string) string {
	initDefaults()
	mu.RLock()
	r := replacer
	mu.RUnlock()
	if r == nil || s == "" {
		return s
	}
	return r.Replace(s)
}

// RedactBytes is Redact for bytes; b is returned unchanged (not copied)
// when it holds no secret.
func RedactBytes(b []byte) []byte {
	initDefaults()
	mu.RLock()
	r := replacer
	found := false
	if r != nil {
		for v := range values {
			if bytes.Contains(b, []byte(v)) {
				found = true
				break
			}
		}
	}
	mu.RUnlock()
	if !found {
		return b
	}
	return []byte(r.Replace(string(b)))
}

// ChildEnv returns environ without ooda's credentials, except those named
// in passthrough; inherit keeps everything. The result is the environment a
// skill, the agent or the judge starts with (docs/security.md).
func ChildEnv(environ []string, passthrough []string, inherit bool) []string {
	if inherit {
		return slices.Clone(environ)
	}
	initDefaults()
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if names[k] && !slices.Contains(passthrough, k) {
			continue
		}
		out = append(out, kv)
	}
	return out
}
