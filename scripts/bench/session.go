package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// sessionCycles is how many cycles one measurement of figure s runs in
// its `ooda run` session: enough that the process's start and exit, paid
// once, are a small part of each cycle's share, few enough that a pair
// stays short.
const sessionCycles = 10

// sessionOutput is the part of `ooda run --json` the benchmark checks.
type sessionOutput struct {
	Cycles     int    `json:"cycles"`
	StopReason string `json:"stop_reason"`
}

// runSession measures n cycles of p run by one `ooda run` session, an hour
// apart (--now, so nothing sleeps), and returns the session's wall time
// and counters divided by n (counts rounded to the nearest whole). Every
// cycle must be full: state.json's cycle count moves by n and each of
// them executed a skill; anything less is an error, as for figure c.
func (b *bench) runSession(bin *binary, p *project, n int) (time.Duration, *Counts, error) {
	now := p.next
	p.next = p.next.Add(time.Duration(n) * time.Hour)
	before, err := readDecisions(p.dir)
	if err != nil {
		return 0, nil, err
	}
	statsFile := filepath.Join(b.work, fmt.Sprintf("stats-%d.json", b.seq.Add(1)))
	defer os.Remove(statsFile)
	args := []string{"--project", p.dir, "--json", "--now", now.Format(time.RFC3339), "run", "--every", "1h", "--max-cycles", strconv.Itoa(n)}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin.Path, args...)
	cmd.Env = benchEnv("OODA_STATS=" + statsFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	what := bin.Path + " " + strings.Join(args, " ")
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %v\n%s", what, err, tail(stderr.Bytes()))
	}
	var out sessionOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return 0, nil, fmt.Errorf("%s: stdout is not the session's JSON: %v\n%s", what, err, tail(stdout.Bytes()))
	}
	after, err := readDecisions(p.dir)
	if err != nil {
		return 0, nil, err
	}
	if err := fullSession(before, after, n); err != nil || out.Cycles != n {
		if err == nil {
			err = fmt.Errorf("the session ran %d cycles", out.Cycles)
		}
		return 0, nil, fmt.Errorf("%s: not %d full cycles (%v, stop reason %q); the figures compare full cycles only\n%s", what, n, err, out.StopReason, tail(stderr.Bytes()))
	}
	data, err := os.ReadFile(statsFile)
	if err != nil {
		// A build without OODA_STATS: the time alone.
		return wall / time.Duration(n), nil, nil
	}
	c, err := parseStats(data)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", statsFile, err)
	}
	per := func(v int64) int64 { return (v + int64(n)/2) / int64(n) }
	pc := Counts{DurableWrites: per(c.DurableWrites), Appends: per(c.Appends), FileSyncs: per(c.FileSyncs), DirSyncs: per(c.DirSyncs), Processes: per(c.Processes)}
	return wall / time.Duration(n), &pc, nil
}

// decisions is what fullSession reads of state.json.
type decisions struct {
	CycleCount  int `json:"cycle_count"`
	DecisionLog []struct {
		Cycle  int    `json:"cycle"`
		Action string `json:"action"`
	} `json:"decision_log"`
}

// readDecisions reads the project's cycle count and decision log.
func readDecisions(dir string) (decisions, error) {
	var d decisions
	b, err := os.ReadFile(filepath.Join(dir, "agent", "state", "evolve", "state.json"))
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("%s: state.json: %w", dir, err)
	}
	return d, nil
}

// fullSession checks that the session between before and after ran n
// cycles, each of which executed a skill.
func fullSession(before, after decisions, n int) error {
	if got := after.CycleCount - before.CycleCount; got != n {
		return fmt.Errorf("the cycle count moved by %d", got)
	}
	executed := 0
	for _, e := range after.DecisionLog {
		if e.Cycle > before.CycleCount && e.Cycle <= after.CycleCount {
			if e.Action != "execute" {
				return fmt.Errorf("cycle %d: action %q", e.Cycle, e.Action)
			}
			executed++
		}
	}
	if executed != n {
		return fmt.Errorf("%d of the %d cycles are in the decision log", executed, n)
	}
	return nil
}
