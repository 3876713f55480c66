package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Figure e compares cycle N of a project with its cycle 10. A cycle
// changes the state it runs on, so to measure the same cycle many times
// the project is built once up to just before cycle 10 and just before
// cycle N, each state kept as a snapshot, and every measured run starts
// from a fresh copy of its snapshot (then a sync, so the copy's writeback
// is not charged to the cycle's fsyncs) at the same --now. Both sides of
// every pair are therefore the same cycle on the same state each time.
//
// Building N cycles takes N whole `ooda cycle` processes. Their fsyncs
// would dominate on a disk, so the project is built on a tmpfs
// (/dev/shm) when there is one — the state files are the same bytes on any
// file system — and only the snapshots are copied to the disk under test.
// The binaries build their projects at the same time.

// buildLong builds figure e's two snapshots for every binary.
func (bn *bench) buildLong(bins []*binary, cycles int, rep *report) (map[string][2]*project, error) {
	scratch := bn.work
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "ooda-bench-"); err == nil {
			scratch = d
			defer os.RemoveAll(d)
		}
	}
	out := map[string][2]*project{}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		first error
	)
	for _, bin := range bins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			late, early, g, err := bn.buildOneLong(bin, cycles, scratch)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = fmt.Errorf("%s: %w", bin.Label, err)
				}
				return
			}
			out[bin.Label] = [2]*project{late, early}
			rep.Growth = append(rep.Growth, g)
		}()
	}
	wg.Wait()
	sort.Slice(rep.Growth, func(i, j int) bool { return rep.Growth[i].Binary < rep.Growth[j].Binary })
	return out, first
}

func (bn *bench) buildOneLong(bin *binary, cycles int, scratch string) (late, early *project, g growth, err error) {
	build := filepath.Join(scratch, "e-"+bin.Label+"-build")
	if err := newProject(bn.ctx, build, 0, 8, false); err != nil {
		return nil, nil, g, err
	}
	snap := func(name string) (string, error) {
		dst := filepath.Join(bn.work, "e-"+bin.Label+"-"+name)
		return dst, copyTree(build, dst)
	}
	began := time.Now()
	var snap10, snapN string
	for i := 1; i < cycles; i++ {
		now := t0.Add(time.Duration(i-1) * time.Hour)
		// The first cycle is the observe-only one; every other must be
		// full, or the late cycle would not be the cycle it claims to be.
		if _, _, err := bn.cycle(bin, build, now, i > 1); err != nil {
			return nil, nil, g, fmt.Errorf("building cycle %d: %w", i, err)
		}
		if i == 9 {
			if snap10, err = snap("snap10"); err != nil {
				return nil, nil, g, err
			}
		}
		if i%250 == 0 {
			bn.log("e: %s: %d of %d cycles built (%.0f s)", bin.Label, i, cycles-1, time.Since(began).Seconds())
		}
	}
	if snapN, err = snap(fmt.Sprintf("snap%d", cycles)); err != nil {
		return nil, nil, g, err
	}
	bn.log("e: %s: %d cycles built in %.0f s", bin.Label, cycles-1, time.Since(began).Seconds())
	late = &project{Name: fmt.Sprintf("cycle %d", cycles), dir: filepath.Join(bn.work, "e-"+bin.Label+"-late"),
		snapshot: snapN, next: t0.Add(time.Duration(cycles-1) * time.Hour)}
	early = &project{Name: "cycle 10", dir: filepath.Join(bn.work, "e-"+bin.Label+"-early"),
		snapshot: snap10, next: t0.Add(9 * time.Hour)}
	g, err = measureGrowth(bin.Label, filepath.Join(snap10, "agent", "state"), filepath.Join(snapN, "agent", "state"), 10, cycles)
	return late, early, g, err
}

// growth is how the state under agent/state differs between the two
// snapshots: what a late cycle reads and rewrites that an early one does
// not.
type growth struct {
	Binary string `json:"binary"`
	From   int    `json:"from_cycle"`
	To     int    `json:"to_cycle"`
	// Dirs are per directory: file count and bytes at both cycles.
	Dirs []dirGrowth `json:"dirs"`
	// Files are the largest files at the later cycle outside
	// directories of per-cycle files.
	Files []fileGrowth `json:"files"`
}

type dirGrowth struct {
	Dir       string `json:"dir"`
	FilesFrom int    `json:"files_from"`
	FilesTo   int    `json:"files_to"`
	BytesFrom int64  `json:"bytes_from"`
	BytesTo   int64  `json:"bytes_to"`
}

type fileGrowth struct {
	Path string `json:"path"`
	From int64  `json:"bytes_from"`
	To   int64  `json:"bytes_to"`
}

func measureGrowth(label, early, late string, from, to int) (growth, error) {
	g := growth{Binary: label, From: from, To: to}
	a, err := treeSizes(early)
	if err != nil {
		return g, err
	}
	b, err := treeSizes(late)
	if err != nil {
		return g, err
	}
	dirs := map[string]*dirGrowth{}
	dir := func(p string) *dirGrowth {
		d := filepath.Dir(p)
		if d != "evolve" && !strings.HasPrefix(d, "evolve"+string(filepath.Separator)) {
			// One row for all the domains' directories.
			d = "<domain>/ (every domain)"
		}
		if dirs[d] == nil {
			dirs[d] = &dirGrowth{Dir: d}
		}
		return dirs[d]
	}
	for p, n := range a {
		d := dir(p)
		d.FilesFrom++
		d.BytesFrom += n
	}
	for p, n := range b {
		d := dir(p)
		d.FilesTo++
		d.BytesTo += n
	}
	for _, k := range sortedKeys(dirs) {
		g.Dirs = append(g.Dirs, *dirs[k])
	}
	for _, p := range sortedKeys(b) {
		if strings.Contains(p, "runs"+string(filepath.Separator)) {
			continue
		}
		g.Files = append(g.Files, fileGrowth{Path: p, From: a[p], To: b[p]})
	}
	sort.SliceStable(g.Files, func(i, j int) bool { return g.Files[i].To > g.Files[j].To })
	if len(g.Files) > 10 {
		g.Files = g.Files[:10]
	}
	return g, nil
}

func printGrowth(w io.Writer, g growth) {
	fmt.Fprintf(w, "e: what grows under agent/state between cycle %d and cycle %d (%s)\n", g.From, g.To, g.Binary)
	fmt.Fprintf(w, "  %-28s %10s %10s %12s %12s\n", "directory", "files", "files", "bytes", "bytes")
	for _, d := range g.Dirs {
		fmt.Fprintf(w, "  %-28s %10d %10d %12d %12d\n", d.Dir, d.FilesFrom, d.FilesTo, d.BytesFrom, d.BytesTo)
	}
	fmt.Fprintf(w, "  largest files (outside runs/):\n")
	for _, f := range g.Files {
		fmt.Fprintf(w, "  %-39s %12d → %d bytes\n", f.Path, f.From, f.To)
	}
}
