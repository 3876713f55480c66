// Package perfstat counts the operations that bound a cycle's cost from
// below — durable writes, fsyncs and child processes — and, when asked
// through the environment, profiles the whole process. The counters are
// what docs/benchmarks.md compares a cycle's wall time against: a cycle
// can be no faster than the durable writes it must make.
package perfstat

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"time"
)

// Environment variables read by Start.
const (
	// EnvCPUProfile names a file to write a pprof CPU profile of the whole
	// process to.
	EnvCPUProfile = "OODA_CPUPROFILE"
	// EnvTrace names a file to write a runtime execution trace to.
	EnvTrace = "OODA_TRACE"
	// EnvStats names a file the counters are written to, as one JSON
	// object, when the process ends.
	EnvStats = "OODA_STATS"
)

var (
	durableWrites atomic.Int64
	fileSyncs     atomic.Int64
	dirSyncs      atomic.Int64
	appends       atomic.Int64
	processes     atomic.Int64
)

// DurableWrite counts one file made durable (written, synced, renamed).
func DurableWrite() { durableWrites.Add(1) }

// FileSync counts one fsync of a file.
func FileSync() { fileSyncs.Add(1) }

// DirSync counts one fsync of a directory.
func DirSync() { dirSyncs.Add(1) }

// Append counts one synced append to a log.
func Append() { appends.Add(1) }

// Process counts one child process started.
func Process() { processes.Add(1) }

// Counts is a snapshot of the counters.
type Counts struct {
	DurableWrites int64 `json:"durable_writes"`
	Appends       int64 `json:"appends"`
	FileSyncs     int64 `json:"file_fsyncs"`
	DirSyncs      int64 `json:"dir_fsyncs"`
	Processes     int64 `json:"processes"`
	// Phases are the marks passed, in order, each with the milliseconds
	// since the process's Go code started: where a cycle's wall time goes,
	// which a CPU profile (blind to fsync waits) cannot say. Only recorded
	// when OODA_STATS is set.
	Phases []Phase `json:"phases,omitempty"`
}

// Phase is one mark: a step of the cycle reached at MS milliseconds.
type Phase struct {
	Name string  `json:"name"`
	MS   float64 `json:"ms"`
}

var (
	// began is as close to the process's start as Go code gets: package
	// initialization, before main.
	began = time.Now()
	// marking is whether Mark records (Start sets it when OODA_STATS is
	// set), so a Mark costs one atomic load when nobody asked.
	marking atomic.Bool
	phaseMu sync.Mutex
	phases  []Phase
)

// Mark records that the process reached the named step, when OODA_STATS
// is set; otherwise it does nothing.
func Mark(name string) {
	if !marking.Load() {
		return
	}
	ms := float64(time.Since(began).Microseconds()) / 1000
	phaseMu.Lock()
	phases = append(phases, Phase{Name: name, MS: ms})
	phaseMu.Unlock()
}

// Snapshot returns the counters' current values.
func Snapshot() Counts {
	phaseMu.Lock()
	defer phaseMu.Unlock()
	return Counts{
		DurableWrites: durableWrites.Load(),
		Appends:       appends.Load(),
		FileSyncs:     fileSyncs.Load(),
		DirSyncs:      dirSyncs.Load(),
		Processes:     processes.Load(),
		Phases:        append([]Phase(nil), phases...),
	}
}

// Start begins what the environment asks for (a CPU profile, a trace) and
// returns the function that ends it and writes the counters. It never
// stops the program: a file that cannot be written is one line on warn.
func Start(warn func(string)) (stop func()) {
	var stops []func()
	if path := os.Getenv(EnvCPUProfile); path != "" {
		if f, err := os.Create(path); err != nil {
			warn(fmt.Sprintf("%s: %v", EnvCPUProfile, err))
		} else if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			warn(fmt.Sprintf("%s: %v", EnvCPUProfile, err))
		} else {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if path := os.Getenv(EnvTrace); path != "" {
		if f, err := os.Create(path); err != nil {
			warn(fmt.Sprintf("%s: %v", EnvTrace, err))
		} else if err := trace.Start(f); err != nil {
			f.Close()
			warn(fmt.Sprintf("%s: %v", EnvTrace, err))
		} else {
			stops = append(stops, func() { trace.Stop(); f.Close() })
		}
	}
	if path := os.Getenv(EnvStats); path != "" {
		marking.Store(true)
		stops = append(stops, func() {
			Mark("exit")
			b, _ := json.Marshal(Snapshot())
			if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
				warn(fmt.Sprintf("%s: %v", EnvStats, err))
			}
		})
	}
	return func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
}
