package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// binary is one ooda build under test.
type binary struct {
	Label string `json:"label"`
	Path  string `json:"path"`
	// stats is whether the binary writes OODA_STATS; learned from its
	// first cycle.
	stats *bool
}

// bench holds what every measurement shares.
type bench struct {
	ctx    context.Context
	work   string // temporary directory on the disk under test
	strace string // path of strace, or ""
	log    func(format string, args ...any)
	seq    atomic.Int64

	// least builds scripts/bench/leastcycle once a run for each of its
	// two builds: linked with ooda (figure k) and bare (figure m).
	least [2]leastBuild
}

// leastBuild is one build of scripts/bench/leastcycle, made on first use.
type leastBuild struct {
	once sync.Once
	path string
	err  error
}

// cycleOutput is the part of `ooda cycle --json` that tells a full cycle
// from one that stopped early.
type cycleOutput struct {
	Status string  `json:"status"`
	Reason *string `json:"reason"`
}

// full reports whether out is a cycle that ran to the end: completed, and
// not the observe-only first cycle or any other early stop.
func (o cycleOutput) full() bool { return o.Status == "completed" && o.Reason == nil }

func (o cycleOutput) String() string {
	r := "null"
	if o.Reason != nil {
		r = *o.Reason
	}
	return fmt.Sprintf("status %q, reason %s", o.Status, r)
}

// cycle runs one `ooda cycle` process on dir at now and returns its wall
// time, from before the process starts to after it has exited. With
// mustBeFull a cycle that stopped early (skipped as too soon, observe-only,
// halted) or failed is an error: the figures compare full cycles only.
// extraEnv is added to the environment (a profile file).
func (b *bench) cycle(bin *binary, dir string, now time.Time, mustBeFull bool, extraEnv ...string) (time.Duration, *Counts, error) {
	statsFile := filepath.Join(b.work, fmt.Sprintf("stats-%d.json", b.seq.Add(1)))
	defer os.Remove(statsFile)
	args := []string{"--project", dir, "--json", "--now", now.Format(time.RFC3339), "cycle"}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin.Path, args...)
	cmd.Env = benchEnv(append([]string{"OODA_STATS=" + statsFile}, extraEnv...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %v\n%s", bin.Path, strings.Join(args, " "), err, tail(stderr.Bytes()))
	}
	var out cycleOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return 0, nil, fmt.Errorf("%s %s: stdout is not the cycle's JSON: %v\n%s", bin.Path, strings.Join(args, " "), err, tail(stdout.Bytes()))
	}
	if mustBeFull && !out.full() {
		return 0, nil, fmt.Errorf("%s %s: not a full cycle (%s); the figures compare full cycles only\n%s", bin.Path, strings.Join(args, " "), out, tail(stderr.Bytes()))
	}
	data, err := os.ReadFile(statsFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if bin.stats == nil {
			f := false
			bin.stats = &f
		}
		return wall, nil, nil
	case err != nil:
		return 0, nil, err
	}
	c, err := parseStats(data)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", statsFile, err)
	}
	if len(c.Steps) > 0 {
		c.Steps = append(c.Steps, Step{Name: outsideGo, MS: max(0, float64(wall.Microseconds())/1000-c.goMS())})
	}
	t := true
	bin.stats = &t
	return wall, &c, nil
}

// straceOne counts one full cycle of dir at now with strace, for a binary
// that writes no OODA_STATS.
func (b *bench) straceOne(bin *binary, dir string, now time.Time) (*Counts, error) {
	if b.strace == "" {
		return nil, nil
	}
	args := []string{"--project", dir, "--json", "--now", now.Format(time.RFC3339), "cycle"}
	c, err := straceCycle(b.ctx, b.strace, bin.Path, args, benchEnv(), b.work)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// project is a fixture project as a side of a pair.
type project struct {
	Name string `json:"name"`
	dir  string
	// snapshot, when set, is copied over dir before every run, so each
	// run starts from the same state at the same --now.
	snapshot string
	next     time.Time
	// runs counts the copies of snapshot made so far (see fresh).
	runs int
	// least, when set, makes a run of the project one of leastcycle
	// instead of ooda (figures k and m).
	least *leastRun
}

// leastRun is how figures k and m run leastcycle on a project.
type leastRun struct {
	path string
	// counts are the durable writes of one cycle of the same project by
	// the binary measured, which leastcycle makes as many of.
	counts Counts
}

// run measures one cycle of p.
func (b *bench) run(bin *binary, p *project, mustBeFull bool, extraEnv ...string) (time.Duration, *Counts, error) {
	if p.least != nil {
		return b.runLeast(p)
	}
	now, dir := p.next, p.dir
	if p.snapshot != "" {
		var err error
		if dir, err = p.fresh(); err != nil {
			return 0, nil, err
		}
	} else {
		p.next = p.next.Add(time.Hour)
	}
	return b.cycle(bin, dir, now, mustBeFull, extraEnv...)
}

// countWithStrace counts one more cycle of p under strace.
func (b *bench) countWithStrace(bin *binary, p *project) (*Counts, error) {
	now, dir := p.next, p.dir
	if p.snapshot != "" {
		var err error
		if dir, err = p.fresh(); err != nil {
			return nil, err
		}
	} else {
		p.next = p.next.Add(time.Hour)
	}
	return b.straceOne(bin, dir, now)
}

// floorOnce makes one small file durable the way the state store does:
// a new temporary file, written, fsynced, closed, renamed over the target,
// and its directory fsynced. It is the least a durable write can cost on
// this disk, whatever the program.
func floorOnce(dir string, data []byte) (time.Duration, error) {
	start := time.Now()
	tmp := filepath.Join(dir, ".floor.tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "floor.json")); err != nil {
		return 0, err
	}
	d, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return 0, err
	}
	if err := d.Close(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// floorSamples is how many single durable writes one floor figure is the
// median of.
const floorSamples = 21

// floor is the median of floorSamples durable writes of a 4 KiB file (the
// size of a typical state file) in dir.
func floor(dir string) (time.Duration, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	data := bytes.Repeat([]byte(`{"k":"v"}`+"\n"), 410)[:4096]
	ds := make([]time.Duration, 0, floorSamples)
	for range floorSamples {
		d, err := floorOnce(dir, data)
		if err != nil {
			return 0, fmt.Errorf("durable-write floor in %s: %w", dir, err)
		}
		ds = append(ds, d)
	}
	return medianDuration(ds), nil
}

// standInWarmup and standInCycles are the full cycles standIn runs and
// of those the ones it counts: the first cycles after the observe-only
// one write a file more than those after them (as figure c's warm-up
// pairs do, they are left out).
const (
	standInWarmup = 2
	standInCycles = 3
)

// standIn makes p figure k's project (figure m's when bare): after
// standInWarmup full cycles of p by bin, standInCycles more say how many
// whole files and appends a cycle makes durable (the median), and every
// later run of p is one of leastcycle making as many — linked with ooda's
// packages, or bare (built with -tags bare, linked with none of them).
func (b *bench) standIn(bin *binary, p *project, bare bool) error {
	for range standInWarmup {
		if _, _, err := b.run(bin, p, true); err != nil {
			return err
		}
	}
	var counted []Counts
	for range standInCycles {
		_, c, err := b.run(bin, p, true)
		if err == nil && c == nil {
			c, err = b.countWithStrace(bin, p)
		}
		if err != nil {
			return err
		}
		if c == nil {
			return fmt.Errorf("%s writes no OODA_STATS and strace is not installed: figures k and m need a cycle's durable writes", bin.Path)
		}
		counted = append(counted, *c)
	}
	c := medianCounts(counted)
	path, err := b.leastcycle(bare)
	if err != nil {
		return err
	}
	// What leastcycle does: a sync for each whole file and append, one
	// for its directory after each of its three groups of renames, and
	// the skill's process.
	p.least = &leastRun{path: path, counts: Counts{DurableWrites: c.DurableWrites, Appends: c.Appends,
		FileSyncs: c.DurableWrites + c.Appends, DirSyncs: 3, Processes: 1}}
	return nil
}

// leastcycle builds scripts/bench/leastcycle as ooda is built (bare: with
// -tags bare as well), once a run, and returns its path.
func (b *bench) leastcycle(bare bool) (string, error) {
	lb, name, tags := &b.least[0], "leastcycle", []string(nil)
	if bare {
		lb, name, tags = &b.least[1], "leastcycle-bare", []string{"-tags", "bare"}
	}
	lb.once.Do(func() {
		lb.path = filepath.Join(b.work, name)
		args := append(append(append([]string{"build"}, releaseBuild...), tags...), "-o", lb.path, "./scripts/bench/leastcycle")
		b.log("building ./scripts/bench/leastcycle into %s (go %s)", lb.path, strings.Join(args, " "))
		cmd := exec.CommandContext(b.ctx, "go", args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			lb.err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, tail(out.Bytes()))
		}
	})
	return lb.path, lb.err
}

// runLeast runs leastcycle once on p and returns its wall time, measured
// as a cycle's is, and the durable writes it made.
func (b *bench) runLeast(p *project) (time.Duration, *Counts, error) {
	args := []string{"--writes", strconv.FormatInt(p.least.counts.DurableWrites, 10), "--appends", strconv.FormatInt(p.least.counts.Appends, 10), p.dir}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.least.path, args...)
	cmd.Env = benchEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %v\n%s", p.least.path, strings.Join(args, " "), err, tail(stderr.Bytes()))
	}
	c := p.least.counts
	return wall, &c, nil
}
