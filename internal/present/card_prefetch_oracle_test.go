package present

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// prefetchedOracle is prefetched as it was first written, kept as the
// oracle of the one that lays what it reads again over what was read
// ahead: every domain's changelog copied into a list of its own, the
// path of each domain's changelog made and looked up in the set of the
// cleaned paths written.
func prefetchedOracle(cfg *config.Config, st *state.Store, rec Recorded) (out []lensLog, ok bool) {
	p := rec.Lens
	if p == nil {
		return nil, false
	}
	p.wait()
	written := make(map[string]bool, len(rec.Written))
	for _, w := range rec.Written {
		written[filepath.ToSlash(filepath.Clean(w))] = true
	}
	out = make([]lensLog, len(cfg.Domains))
	var again []int
	for i, d := range cfg.Domains {
		if i < len(p.domains) && p.domains[i] == d.Name && !written["agent/state/"+d.Name+"/lens_changelog.json"] {
			out[i] = p.at(i)
			continue
		}
		again = append(again, i)
	}
	st.ReadEach(len(again), func(k int) {
		i := again[k]
		out[i].cl, out[i].err = st.ReadLensChangelog(cfg.Domains[i].Name)
	})
	return out, true
}

// TestPrefetchedIsTheOracle holds prefetched to prefetchedOracle: random
// configurations against random prefetches (the same domains, fewer,
// more, renamed, reordered), each with random paths written — a domain's
// changelog named as Step 6 names it, through "..", "." and doubled
// separators, with a trailing separator, absolute, another file of the
// domain, a name that is a prefix of another, names with separators in
// them — and changelogs on disk that are missing, valid or corrupt.
// What was read ahead is marked so that a changelog read again cannot
// pass for it.
func TestPrefetchedIsTheOracle(t *testing.T) {
	dir := t.TempDir()
	st := state.New(dir)
	pool := []string{"a", "b", "ab", "a.b", "svc", "svc_1", "x-y", "d0", "d1", "d10", "d100", "lens_changelog.json", "state", "agent"}
	for i, name := range pool {
		p := filepath.Join(dir, "agent", "state", name, "lens_changelog.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 0: // missing
		case 1:
			body := fmt.Sprintf(`{"domain": %q, "entries": [{"cycle": 7, "item": "on disk %d", "change_type": "promoted", "delta": 0.1}]}`, name, i)
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		case 2:
			if err := os.WriteFile(p, []byte(`{"entries": [`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	pathsOf := func(r *rand.Rand, name string) string {
		forms := []string{
			"agent/state/" + name + "/lens_changelog.json",
			filepath.Join("agent", "state", name, "lens_changelog.json"),
			"agent/state/" + name + "/../" + name + "/lens_changelog.json",
			"./agent/state/" + name + "/./lens_changelog.json",
			"agent//state//" + name + "//lens_changelog.json",
			"agent/state/" + name + "/lens_changelog.json/",
			"/agent/state/" + name + "/lens_changelog.json",
			"agent/state/" + name + "/lens.json",
			"agent/state/" + name + "x/lens_changelog.json",
			"agent/state/" + name + "/sub/lens_changelog.json",
			"agent/state/lens_changelog.json",
			"agent/state//lens_changelog.json",
			"agent/state/" + name,
			"agent/state/evolve/state.json",
			"",
		}
		return forms[r.IntN(len(forms))]
	}
	r := rand.New(rand.NewPCG(7, 11))
	for round := range 600 {
		names := func(n int) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = pool[r.IntN(len(pool))]
			}
			return out
		}
		cfg := &config.Config{}
		for _, n := range names(r.IntN(8)) {
			cfg.Domains = append(cfg.Domains, config.Domain{Name: n})
		}
		// The prefetch: mostly of the same domains, sometimes of others.
		var ahead []string
		switch r.IntN(4) {
		case 0:
			ahead = names(r.IntN(9))
		case 1:
			for _, d := range cfg.Domains[:r.IntN(len(cfg.Domains)+1)] {
				ahead = append(ahead, d.Name)
			}
		default:
			for _, d := range cfg.Domains {
				ahead = append(ahead, d.Name)
			}
			ahead = append(ahead, names(r.IntN(2))...)
		}
		// Read ahead: a changelog marked as such, or none (a domain
		// without a changelog file).
		p := &LensPrefetch{done: make(chan struct{}), domains: ahead, logs: make([]*lensLog, len(ahead))}
		for i, n := range ahead {
			if r.IntN(3) > 0 {
				p.logs[i] = &lensLog{cl: state.LensChangelog{Domain: n, Entries: []state.LensChange{{Cycle: 7, Item: fmt.Sprintf("read ahead %d", i)}}}}
			}
		}
		close(p.done)
		var written []string
		for range r.IntN(5) {
			written = append(written, pathsOf(r, pool[r.IntN(len(pool))]))
		}
		rec := Recorded{Lens: p, Written: written}
		want, wok := prefetchedOracle(cfg, st, rec)
		got, gok := prefetched(cfg, st, rec)
		if gok != wok {
			t.Fatalf("round %d: ok %v; the oracle: %v", round, gok, wok)
		}
		for i := range want {
			g, w := got.at(i), want[i]
			if !reflect.DeepEqual(g.cl, w.cl) || fmt.Sprint(g.err) != fmt.Sprint(w.err) {
				t.Fatalf("round %d, domains %v, read ahead %q, written %q: domain %d (%s):\n got %+v, %v\nwant %+v, %v",
					round, cfg.Domains, ahead, written, i, cfg.Domains[i].Name, g.cl, g.err, w.cl, w.err)
			}
		}
		// What was read ahead is not changed by what is read again: the
		// card may be built twice from the same prefetch.
		for i, n := range ahead {
			if l := p.logs[i]; l != nil && (l.cl.Domain != n || l.cl.Entries[0].Item != fmt.Sprintf("read ahead %d", i)) {
				t.Fatalf("round %d: the prefetch's changelog %d changed: %+v", round, i, l.cl)
			}
		}
	}
	if _, ok := prefetched(&config.Config{}, st, Recorded{}); ok {
		t.Error("no prefetch: ok")
	}
}

// TestPrefetchKeepsWhatItRead reads ahead the lens changelogs of domains
// whose files are missing, empty objects, objects naming the domain and
// nothing else (what a missing file reads as), naming another domain,
// with a schema version, an unknown key, no entries or some, not JSON,
// not an object, a directory and a symlink out of the project, and
// requires, for each, what ReadLensChangelog returns for it: kept as
// read, or kept as nothing and given back as the missing file's.
func TestPrefetchKeepsWhatItRead(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "outside.json"), []byte(`{"domain": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(dir, "p")
	bodies := []string{"", "{}", `{"domain": "%s"}`, `{"domain": "%s", "entries": null}`, `{"domain": "other"}`, `{"schema_version": "1", "domain": "%s"}`,
		`{"domain": "%s", "x": 1}`, `{"domain": "%s", "entries": []}`, `{"entries": [{"cycle": 3, "item": "i", "delta": 0.1}]}`, `{"entries": [`, `[]`, "dir", "link"}
	cfg := &config.Config{}
	for i := range 3 * len(bodies) {
		name := fmt.Sprintf("d%d", i)
		cfg.Domains = append(cfg.Domains, config.Domain{Name: name})
		p := filepath.Join(project, "agent", "state", name, "lens_changelog.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch body := bodies[i%len(bodies)]; body {
		case "":
		case "dir":
			err = os.Mkdir(p, 0o755)
		case "link":
			err = os.Symlink("../../../../outside.json", p)
		default:
			if strings.Contains(body, "%s") {
				body = fmt.Sprintf(body, name)
			}
			err = os.WriteFile(p, []byte(body), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	st := state.New(project)
	p := PrefetchLensChangelogs(cfg, st)
	p.wait()
	kept := 0
	for i, d := range cfg.Domains {
		cl, err := st.ReadLensChangelog(d.Name)
		got := p.at(i)
		if !reflect.DeepEqual(got.cl, cl) || fmt.Sprint(got.err) != fmt.Sprint(err) {
			t.Errorf("%s (%q): read ahead %+v, %v; ReadLensChangelog: %+v, %v", d.Name, bodies[i%len(bodies)], got.cl, got.err, cl, err)
		}
		if p.logs[i] != nil {
			kept++
		}
	}
	if kept == 0 || kept == len(cfg.Domains) {
		t.Errorf("%d of %d changelogs kept: both kinds must be exercised", kept, len(cfg.Domains))
	}
}

// TestNoChangelogKnowsEveryField fails when state.LensChangelog gains a
// field that noChangelog does not compare.
func TestNoChangelogKnowsEveryField(t *testing.T) {
	var fields []string
	for f := range reflect.TypeFor[state.LensChangelog]().Fields() {
		fields = append(fields, f.Name)
	}
	if want := []string{"SchemaVersion", "Domain", "Entries", "Extra"}; !reflect.DeepEqual(fields, want) {
		t.Errorf("state.LensChangelog has the fields %q; noChangelog compares %q", fields, want)
	}
}

// cardBenchProject is a project of 1,000 domains, none with a lens
// changelog yet, whose newest decision-log entry is executed's.
func cardBenchProject(b *testing.B) (*config.Config, *state.Store) {
	dir := b.TempDir()
	var doms []string
	for i := range 1000 {
		doms = append(doms, fmt.Sprintf(`"d%d": {"weight": 1, "primary_skill": "/x"}`, i))
		if err := os.MkdirAll(filepath.Join(dir, "agent", "state", fmt.Sprintf("d%d", i)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "agent", "state", "evolve"), 0o755); err != nil {
		b.Fatal(err)
	}
	files := map[string]string{
		"config.json":                   `{"project": {"name": "many"}, "domains": {` + strings.Join(doms, ", ") + `}}`,
		"agent/state/evolve/state.json": entryState("{" + executed + "}"),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cfg, err := config.LoadProject(filepath.Join(dir, "config.json"), dir)
	if err != nil {
		b.Fatal(err)
	}
	return cfg, state.New(dir)
}

// BenchmarkLensPrefetch1000 is the reading ahead of the lens changelogs
// of a project of 1,000 domains that have none.
func BenchmarkLensPrefetch1000(b *testing.B) {
	cfg, st := cardBenchProject(b)
	b.ReportAllocs()
	for b.Loop() {
		WaitLensPrefetch(PrefetchLensChangelogs(cfg, st))
	}
}

// BenchmarkCardPrefetched1000 is the card at the end of a cycle of a
// project of 1,000 domains, none with a lens changelog yet, read ahead
// while the cycle recorded itself: what the card costs once the
// changelogs are read (Step 6 names the selected domain's changelog
// among the files it wrote, so that one is read again).
func BenchmarkCardPrefetched1000(b *testing.B) {
	cfg, st := cardBenchProject(b)
	p := PrefetchLensChangelogs(cfg, st)
	WaitLensPrefetch(p)
	rec := Recorded{Lens: p, Written: []string{"agent/state/evolve/state.json", filepath.Join("agent", "state", "d7", "lens_changelog.json")}}
	b.ReportAllocs()
	for b.Loop() {
		if v := BuildCardFrom(cfg, st, rec); v.Card == nil || len(v.Corrupt) != 0 {
			b.Fatalf("%+v", v)
		}
	}
}
