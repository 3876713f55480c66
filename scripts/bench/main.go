// Command bench measures whole `ooda cycle` processes against the floors a
// cycle cannot go below, as ratios taken pair by pair in one interleaved
// run, so that whatever else the machine is doing weighs on both sides of
// each ratio. docs/benchmarks.md ("A cycle against its floors") describes
// each figure and how to read the output; scripts/bench.sh runs it.
//
//	go run ./scripts/bench [--bin PATH] [--base PATH] [--only a,b,...]
//	    [--pairs N] [--warmup N] [--cycles N] [--history N] [--domains N]
//	    [--profile DIR] [--keep] [--json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// options are the command line.
type options struct {
	bin, base      string
	only           map[string]bool
	pairs, warmup  int
	cycles         int
	history        int
	domains        int
	profile        string
	keep, jsonOut  bool
	onlyFlagString string
}

// figure is one ratio and its target.
type figure struct {
	ID     string  `json:"id"`
	Title  string  `json:"title"`
	Target float64 `json:"target"`
	// prepare, when set, runs once before setup with every binary: the
	// long fixtures are built side by side.
	prepare func(bn *bench, bins []*binary) error
	// setup prepares the two sides for one binary. b == nil means the
	// second side is the durable-write floor in a's directory.
	setup func(bn *bench, bin *binary) (a, b *project, err error)
	// session, when above 0, measures side a as that many cycles of one
	// `ooda run` session instead of one `ooda cycle` process: its wall
	// time and counters are the session's divided by the cycles.
	session int
}

// sideResult is one binary's figure.
type sideResult struct {
	Binary  string    `json:"binary"`
	Ratios  []float64 `json:"ratios"`
	Spread  Spread    `json:"ratio"`
	Verdict string    `json:"verdict"`
	// MedianA and MedianB are the median wall times of the two sides
	// (for the floor figure, B is the single durable-write floor).
	MedianA time.Duration `json:"median_a_ns"`
	MedianB time.Duration `json:"median_b_ns"`
	A       string        `json:"a"`
	B       string        `json:"b"`
	CountsA *Counts       `json:"counts_a,omitempty"`
	CountsB *Counts       `json:"counts_b,omitempty"`
	// CountSource says where the counters come from: OODA_STATS, strace
	// or nowhere.
	CountSource string `json:"count_source"`
}

// figureResult is one figure over every binary.
type figureResult struct {
	ID      string       `json:"id"`
	Title   string       `json:"title"`
	Target  float64      `json:"target"`
	Sides   []sideResult `json:"binaries"`
	Seconds float64      `json:"seconds"`
	Notes   []string     `json:"notes,omitempty"`
}

// report is the whole run.
type report struct {
	Pairs   int            `json:"pairs"`
	Warmup  int            `json:"warmup"`
	Figures []figureResult `json:"figures"`
	Growth  []growth       `json:"growth,omitempty"`
	Seconds float64        `json:"seconds"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func parseFlags() (options, error) {
	var o options
	flag.StringVar(&o.bin, "bin", "", "the ooda binary to measure (default: build ./cmd/ooda into the temporary directory)")
	flag.StringVar(&o.base, "base", "", "a second binary, measured the same way in the same rounds (before/after)")
	flag.StringVar(&o.onlyFlagString, "only", "a,b,c,k,m,s,d,e", "the figures to measure, comma-separated")
	flag.IntVar(&o.pairs, "pairs", 15, "measured pairs per figure and binary")
	flag.IntVar(&o.warmup, "warmup", 2, "pairs run first and not counted")
	flag.IntVar(&o.cycles, "cycles", 2000, "figure e: the late cycle compared with cycle 10")
	flag.IntVar(&o.history, "history", 20000, "figure a: commits of the long history")
	flag.IntVar(&o.domains, "domains", 1000, "figure d: domains of the large project")
	flag.StringVar(&o.profile, "profile", "", "write a CPU profile (OODA_CPUPROFILE) of one more cycle of each side of each figure of --bin into this directory")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (its path is printed)")
	flag.BoolVar(&o.jsonOut, "json", false, "print the results as one JSON document")
	flag.Parse()
	if flag.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", flag.Arg(0))
	}
	o.only = map[string]bool{}
	for _, id := range strings.Split(o.onlyFlagString, ",") {
		id = strings.TrimSpace(id)
		if id == "" {
			continue
		}
		if !strings.Contains("abcdeskm", id) || len(id) != 1 {
			return o, fmt.Errorf("--only: unknown figure %q (figures: a, b, c, d, e, s, k, m)", id)
		}
		o.only[id] = true
	}
	switch {
	case o.pairs < 1:
		return o, fmt.Errorf("--pairs: at least 1, got %d", o.pairs)
	case o.warmup < 0:
		return o, fmt.Errorf("--warmup: at least 0, got %d", o.warmup)
	case o.cycles < 20:
		return o, fmt.Errorf("--cycles: at least 20 (it is compared with cycle 10), got %d", o.cycles)
	case o.history < 1:
		return o, fmt.Errorf("--history: at least 1, got %d", o.history)
	case o.domains < 1:
		return o, fmt.Errorf("--domains: at least 1, got %d", o.domains)
	}
	return o, nil
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	began := time.Now()
	work, err := os.MkdirTemp("", "ooda-bench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "bench: keeping", work)
	} else {
		defer os.RemoveAll(work)
	}
	bn := &bench{ctx: ctx, work: work, log: func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[%5.0fs] "+format+"\n", append([]any{time.Since(began).Seconds()}, args...)...)
	}}
	if p, err := exec.LookPath("strace"); err == nil {
		bn.strace = p
	}
	if o.profile != "" {
		if err := os.MkdirAll(o.profile, 0o755); err != nil {
			return err
		}
		if o.profile, err = filepath.Abs(o.profile); err != nil {
			return err
		}
	}

	bins := []*binary{}
	if o.bin == "" {
		path := filepath.Join(work, "ooda")
		bn.log("building ./cmd/ooda into %s (as a release is built: %s)", path, strings.Join(releaseBuild, " "))
		cmd := exec.CommandContext(ctx, "go", append(append([]string{"build"}, releaseBuild...), "-o", path, "./cmd/ooda")...)
		// Static, as the image and the action build it: a binary linked
		// against libc starts about a millisecond later (the dynamic
		// loader), a cost no user of a release pays.
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/ooda: %w", err)
		}
		o.bin = path
	}
	for _, b := range []struct{ label, path string }{{"bin", o.bin}, {"base", o.base}} {
		if b.path == "" {
			continue
		}
		abs, err := filepath.Abs(b.path)
		if err != nil {
			return err
		}
		if fi, err := os.Stat(abs); err != nil || fi.IsDir() {
			return fmt.Errorf("--%s %s: not a file", b.label, b.path)
		}
		bins = append(bins, &binary{Label: b.label, Path: abs})
	}

	rep := &report{Pairs: o.pairs, Warmup: o.warmup}
	for _, f := range figures(&o, rep) {
		if !o.only[f.ID] {
			continue
		}
		fr, err := bn.measure(f, bins, &o)
		if err != nil {
			return fmt.Errorf("figure %s: %w", f.ID, err)
		}
		rep.Figures = append(rep.Figures, fr)
		for _, sr := range fr.Sides {
			bn.log("%s: %s: %s: median %.2f× (%.2f–%.2f), %s", fr.ID, fr.Title, sr.Binary, sr.Spread.Median, sr.Spread.Min, sr.Spread.Max, sr.Verdict)
		}
	}
	rep.Seconds = time.Since(began).Seconds()
	if o.jsonOut {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printReport(os.Stdout, rep)
	return nil
}

// figures lists the five figures, k and m (right after c, so that all
// three meet the disk in about the same state) and s. Every project runs 8 domains with
// commits off unless the figure varies exactly that.
func figures(o *options, rep *report) []figure {
	var (
		historyOnce sync.Once
		historyDir  string
		historyErr  error
		long        map[string][2]*project
	)
	return []figure{
		{ID: "a", Title: fmt.Sprintf("%d earlier commits / 2 commits", o.history), Target: 1.15,
			setup: func(bn *bench, bin *binary) (*project, *project, error) {
				historyOnce.Do(func() {
					historyDir = filepath.Join(bn.work, "a-history-template")
					bn.log("a: building a %d-commit history with git fast-import", o.history)
					historyErr = newProject(bn.ctx, historyDir, o.history, 8, false)
				})
				if historyErr != nil {
					return nil, nil, historyErr
				}
				a := &project{Name: fmt.Sprintf("%d commits", o.history+2), dir: filepath.Join(bn.work, "a-"+bin.Label+"-long"), next: t0}
				if err := copyTree(historyDir, a.dir); err != nil {
					return nil, nil, err
				}
				if _, _, err := bn.run(bin, a, false); err != nil {
					return nil, nil, err
				}
				if err := bn.catchUp(bin, a); err != nil {
					return nil, nil, err
				}
				b, err := bn.newSide(bin, "a-"+bin.Label+"-short", "2 commits", 0, 8, false)
				return a, b, err
			}},
		{ID: "b", Title: "state commits on / off", Target: 1.2,
			setup: func(bn *bench, bin *binary) (*project, *project, error) {
				a, err := bn.newSide(bin, "b-"+bin.Label+"-on", "commit_state on", 0, 8, true)
				if err != nil {
					return nil, nil, err
				}
				b, err := bn.newSide(bin, "b-"+bin.Label+"-off", "commit_state off", 0, 8, false)
				return a, b, err
			}},
		{ID: "c", Title: "cycle / (durable writes × floor)", Target: 3,
			setup: func(bn *bench, bin *binary) (*project, *project, error) {
				a, err := bn.newSide(bin, "c-"+bin.Label, "8 domains, commits off", 0, 8, false)
				return a, nil, err
			}},
		// Figure c's least possible value: scripts/bench/leastcycle, linked
		// from ooda's packages, starting and exiting as ooda does, doing
		// only a cycle's unavoidable input and output, with as many
		// durable writes as the same project's cycle by bin. Not one of
		// the five targets; it says how much of c no cycle can avoid.
		{ID: "k", Title: "least cycle / (durable writes × floor)", Target: 3,
			setup: leastSetup("k", "least cycle, as c's", false)},
		// k from a bare build of leastcycle, linked with none of ooda's
		// packages: the least any cycle process costs here, whatever it
		// is built from. The gap between k and m is what starting ooda's
		// packages costs; what is left of 3× over m is all a cycle's own
		// work may take.
		{ID: "m", Title: "bare least / (durable writes × floor)", Target: 3,
			setup: leastSetup("m", "least cycle, bare build", true)},
		// Figure c without the process: the same project's cycles run
		// by one `ooda run` session, whose start and exit are shared by
		// sessionCycles cycles. Not one of the five targets; it says how
		// much of c is the process's own start.
		{ID: "s", Title: "session cycle / (durable writes × floor)", Target: 3, session: sessionCycles,
			setup: func(bn *bench, bin *binary) (*project, *project, error) {
				a, err := bn.newSide(bin, "s-"+bin.Label, "8 domains, in ooda run", 0, 8, false)
				return a, nil, err
			}},
		{ID: "d", Title: fmt.Sprintf("%d domains / 8 domains", o.domains), Target: 2,
			setup: func(bn *bench, bin *binary) (*project, *project, error) {
				a, err := bn.newSide(bin, "d-"+bin.Label+"-large", fmt.Sprintf("%d domains", o.domains), 0, o.domains, false)
				if err != nil {
					return nil, nil, err
				}
				b, err := bn.newSide(bin, "d-"+bin.Label+"-small", "8 domains", 0, 8, false)
				return a, b, err
			}},
		{ID: "e", Title: fmt.Sprintf("cycle %d / cycle 10", o.cycles), Target: 1.15,
			prepare: func(bn *bench, bins []*binary) error {
				var err error
				long, err = bn.buildLong(bins, o.cycles, rep)
				return err
			},
			setup: func(bn *bench, bin *binary) (*project, *project, error) {
				l := long[bin.Label]
				return l[0], l[1], nil
			}},
	}
}

// leastSetup is the setup of figure id, k or m: a project like c's whose
// runs are leastcycle's (bare or linked with ooda), after the cycles that
// count its durable writes.
func leastSetup(id, name string, bare bool) func(*bench, *binary) (*project, *project, error) {
	return func(bn *bench, bin *binary) (*project, *project, error) {
		a, err := bn.newSide(bin, id+"-"+bin.Label, name, 0, 8, false)
		if err != nil {
			return nil, nil, err
		}
		return a, nil, bn.standIn(bin, a, bare)
	}
}

// maxCatchUp bounds the cycles catchUp runs: 20,000 commits take ten.
const maxCatchUp = 64

// catchUp runs cycles of p until its forge cursor holds no part of the
// history left to read (forge.md: a long history is read 2,000 commits a
// cycle), so that figure a measures the steady state every later cycle
// of a long-lived project is in, not its first cycles; it logs how many
// cycles that took and what they cost, the one-time price of a long
// history. A build without a cursor has nothing to catch up.
func (bn *bench) catchUp(bin *binary, p *project) error {
	var took []time.Duration
	for len(took) < maxCatchUp {
		b, err := os.ReadFile(filepath.Join(p.dir, "agent", "state", "evolve", "forge_cursor.json"))
		var cur struct {
			Floor []string `json:"unread_below"`
		}
		if err != nil || json.Unmarshal(b, &cur) != nil || len(cur.Floor) == 0 {
			break
		}
		d, _, err := bn.run(bin, p, true)
		if err != nil {
			return err
		}
		took = append(took, d)
	}
	if len(took) > 0 {
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		bn.log("a: %s read the older history in %d cycles (median %s, %s–%s), before the measured ones",
			bin.Label, len(took), ms(took[len(took)/2]), ms(took[0]), ms(took[len(took)-1]))
	}
	return nil
}

// newSide creates a project and runs its first cycle, the observe-only
// one, so that every measured cycle (warm-up included) is a full cycle.
func (bn *bench) newSide(bin *binary, dirName, name string, history, domains int, commit bool) (*project, error) {
	p := &project{Name: name, dir: filepath.Join(bn.work, dirName), next: t0}
	if err := newProject(bn.ctx, p.dir, history, domains, commit); err != nil {
		return nil, err
	}
	if _, _, err := bn.run(bin, p, false); err != nil {
		return nil, err
	}
	return p, nil
}

// settlePause is how long measure waits after making the projects,
// longer than the margin a state commit allows a file's timestamps
// (internal/gitrepo: one second, three on a file system with whole-second
// times).
const settlePause = 3500 * time.Millisecond

// measure runs one figure for every binary, interleaved: in each round,
// each binary runs its pair. The order within a pair alternates (A B,
// then B A) so that a trend during the run (a build starting beside it)
// does not always fall on the same side.
func (bn *bench) measure(f figure, bins []*binary, o *options) (figureResult, error) {
	began := time.Now()
	fr := figureResult{ID: f.ID, Title: f.Title, Target: f.Target}
	type sides struct {
		a, b         *project
		ta, tb       []time.Duration
		ca, cb       []Counts
		floorDir     string
		durableCount int64
	}
	ss := make([]*sides, len(bins))
	if f.prepare != nil {
		if err := f.prepare(bn, bins); err != nil {
			return fr, err
		}
	}
	for i, bin := range bins {
		bn.log("%s: preparing the projects of %s (%s)", f.ID, bin.Label, bin.Path)
		a, b, err := f.setup(bn, bin)
		if err != nil {
			return fr, err
		}
		ss[i] = &sides{a: a, b: b}
		if b == nil {
			ss[i].floorDir = filepath.Join(filepath.Dir(a.dir), filepath.Base(a.dir)+"-floor")
		}
	}
	// The projects were made a moment ago; a real project's git
	// configuration, ignore and attribute files were not written in the
	// second before a cycle. State commits do not reuse git's answers about
	// files that changed within the last second or so (the file system's
	// clock may not tell a later change apart), so without this pause every
	// measured commit would ask git again, as only a project's very first
	// commits do.
	time.Sleep(settlePause)
	for round := -o.warmup; round < o.pairs; round++ {
		if round == 0 || (round > 0 && round%5 == 0) {
			bn.log("%s: pair %d of %d", f.ID, round+1, o.pairs)
		}
		for i, bin := range bins {
			s := ss[i]
			runA := func() (time.Duration, *Counts, error) {
				if f.session > 0 {
					return bn.runSession(bin, s.a, f.session)
				}
				return bn.run(bin, s.a, true)
			}
			runB := func() (time.Duration, *Counts, error) {
				if s.b == nil {
					d, err := floor(s.floorDir)
					return d, nil, err
				}
				return bn.run(bin, s.b, true)
			}
			var ta, tb time.Duration
			var ca, cb *Counts
			var err error
			if round%2 == 0 {
				if ta, ca, err = runA(); err == nil {
					tb, cb, err = runB()
				}
			} else {
				if tb, cb, err = runB(); err == nil {
					ta, ca, err = runA()
				}
			}
			if err != nil {
				return fr, err
			}
			if round < 0 {
				continue
			}
			s.ta, s.tb = append(s.ta, ta), append(s.tb, tb)
			if ca != nil {
				s.ca = append(s.ca, *ca)
			}
			if cb != nil {
				s.cb = append(s.cb, *cb)
			}
		}
	}
	for i, bin := range bins {
		s := ss[i]
		sr := sideResult{Binary: bin.Label, A: s.a.Name, B: "durable-write floor (4 KiB file)"}
		if s.b != nil {
			sr.B = s.b.Name
		}
		switch {
		case s.a.least != nil:
			sr.CountsA, sr.CountSource = &s.a.least.counts, "as one cycle of "+bin.Label
		case len(s.ca) > 0:
			c := medianCounts(s.ca)
			sr.CountsA, sr.CountSource = &c, "OODA_STATS"
			if len(s.cb) > 0 {
				c := medianCounts(s.cb)
				sr.CountsB = &c
			}
		case bn.strace != "":
			bn.log("%s: counting one more cycle of %s under strace (it writes no OODA_STATS)", f.ID, bin.Label)
			ca, err := bn.countWithStrace(bin, s.a)
			if err != nil {
				return fr, err
			}
			sr.CountsA, sr.CountSource = ca, "strace"
			if s.b != nil {
				if sr.CountsB, err = bn.countWithStrace(bin, s.b); err != nil {
					return fr, err
				}
			}
		default:
			sr.CountSource = "none (no OODA_STATS, no strace)"
		}
		if o.profile != "" && bin.Label == "bin" {
			for _, side := range []struct {
				name string
				p    *project
			}{{"a", s.a}, {"b", s.b}} {
				if side.p == nil || side.p.least != nil {
					continue
				}
				file := filepath.Join(o.profile, fmt.Sprintf("%s-%s.pprof", f.ID, side.name))
				if _, _, err := bn.run(bin, side.p, true, "OODA_CPUPROFILE="+file); err != nil {
					return fr, err
				}
				fr.Notes = append(fr.Notes, fmt.Sprintf("CPU profile of one more cycle of %q (%s): %s", side.p.Name, bin.Label, file))
			}
		}
		tb := s.tb
		if s.b == nil {
			// The floor figure: the second side of each pair is the
			// cycle's durable writes, each at the floor measured beside
			// that cycle.
			if sr.CountsA == nil || sr.CountsA.Durable() == 0 {
				sr.Verdict = "no counters"
				fr.Sides = append(fr.Sides, sr)
				continue
			}
			n := sr.CountsA.Durable()
			tb = make([]time.Duration, len(s.tb))
			for j, fl := range s.tb {
				tb[j] = fl * time.Duration(n)
			}
			fr.Notes = append(fr.Notes, fmt.Sprintf("%s: %d durable writes per cycle (%d whole files + %d appends) × floor %s (median of the per-pair floors, each the median of %d)",
				bin.Label, n, sr.CountsA.DurableWrites, sr.CountsA.Appends, ms(medianDuration(s.tb)), floorSamples))
		}
		ratios, err := pairRatios(s.ta, tb)
		if err != nil {
			return fr, err
		}
		sr.Ratios, sr.Spread = ratios, spread(ratios)
		sr.MedianA, sr.MedianB = medianDuration(s.ta), medianDuration(s.tb)
		sr.Verdict = verdict(sr.Spread.Median, f.Target)
		fr.Sides = append(fr.Sides, sr)
	}
	fr.Seconds = time.Since(began).Seconds()
	return fr, nil
}

// verdict compares a median ratio with its target.
func verdict(ratio, target float64) string {
	if math.IsNaN(ratio) {
		return "no data"
	}
	if ratio <= target {
		return "met"
	}
	return "not met"
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func printReport(w *os.File, rep *report) {
	fmt.Fprintf(w, "ooda cycle against its floors: %d measured pairs per figure and binary (after %d warm-up pairs), ratios taken pair by pair\n\n", rep.Pairs, rep.Warmup)
	fmt.Fprintf(w, "%-3s %-40s %-7s %-6s %-8s %-13s %-8s %-10s %-10s\n", "", "figure", "target", "binary", "median", "min–max", "verdict", "A median", "B median")
	for _, f := range rep.Figures {
		for i, s := range f.Sides {
			id, title, target := f.ID, f.Title, fmt.Sprintf("≤ %.2f×", f.Target)
			if i > 0 {
				id, title, target = "", "", ""
			}
			if s.Ratios == nil {
				fmt.Fprintf(w, "%-3s %-40s %-7s %-6s %-8s %-13s %-8s\n", id, title, target, s.Binary, "—", "—", s.Verdict)
				continue
			}
			fmt.Fprintf(w, "%-3s %-40s %-7s %-6s %-8s %-13s %-8s %-10s %-10s\n", id, title, target, s.Binary,
				fmt.Sprintf("%.2f×", s.Spread.Median), fmt.Sprintf("%.2f–%.2f", s.Spread.Min, s.Spread.Max), s.Verdict,
				ms(s.MedianA), ms(s.MedianB))
		}
	}
	fmt.Fprintf(w, "\nper-cycle counters (median over the measured cycles)\n")
	fmt.Fprintf(w, "%-3s %-26s %-6s %8s %8s %12s %11s %10s  %s\n", "", "project", "binary", "durable", "appends", "file fsyncs", "dir fsyncs", "processes", "source")
	eachProject(rep, func(id, name string, s sideResult, c *Counts) {
		if c == nil {
			if name == s.A {
				fmt.Fprintf(w, "%-3s %-26s %-6s %8s %8s %12s %11s %10s  %s\n", id, name, s.Binary, "—", "—", "—", "—", "—", s.CountSource)
			}
			return
		}
		fmt.Fprintf(w, "%-3s %-26s %-6s %8d %8d %12d %11d %10d  %s\n", id, name, s.Binary, c.DurableWrites, c.Appends, c.FileSyncs, c.DirSyncs, c.Processes, s.CountSource)
	})
	printSteps(w, rep)
	for _, f := range rep.Figures {
		for _, n := range f.Notes {
			fmt.Fprintf(w, "\n%s: %s", f.ID, n)
		}
	}
	for _, g := range rep.Growth {
		fmt.Fprintf(w, "\n\n")
		printGrowth(w, g)
	}
	fmt.Fprintf(w, "\ntime per figure:")
	for _, f := range rep.Figures {
		fmt.Fprintf(w, " %s %.0f s;", f.ID, f.Seconds)
	}
	fmt.Fprintf(w, " total %.0f s\n", rep.Seconds)
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// releaseBuild is how the release image (Dockerfile) and the action
// (scripts/action/build.sh) build ooda, with CGO_ENABLED=0: the binary the
// benchmark measures when --bin is not given is the one users run.
var releaseBuild = []string{"-trimpath", "-ldflags", "-s -w"}

// printSteps prints where each measured project's wall time went, from
// the phases of the cycles (median milliseconds a step), for the builds
// that record them.
func printSteps(w *os.File, rep *report) {
	header := false
	eachProject(rep, func(id, name string, s sideResult, c *Counts) {
		if c == nil || len(c.Steps) == 0 {
			return
		}
		if !header {
			fmt.Fprintf(w, "\nwhere the time goes (median ms per step; OODA_STATS phases)\n")
			header = true
		}
		var parts []string
		for _, st := range c.Steps {
			parts = append(parts, fmt.Sprintf("%s %.1f", st.Name, st.MS))
		}
		fmt.Fprintf(w, "%-3s %-26s %-6s %s\n", id, name, s.Binary, strings.Join(parts, " · "))
	})
}

// eachProject calls fn for both projects of every measured side of every
// figure, A then B, with the project's counters (nil when not counted).
func eachProject(rep *report, fn func(id, name string, s sideResult, c *Counts)) {
	for _, f := range rep.Figures {
		for _, s := range f.Sides {
			fn(f.ID, s.A, s, s.CountsA)
			fn(f.ID, s.B, s, s.CountsB)
		}
	}
}
