package main

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"
)

// Spread is the median of a set of ratios and its extremes.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// pairRatios divides each a[i] by b[i]. The two runs of a pair were made
// next to each other, so whatever else the machine was doing at that moment
// weighs on both; a ratio of medians would compare runs made minutes apart.
func pairRatios(a, b []time.Duration) ([]float64, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("%d runs against %d: the runs must come in pairs", len(a), len(b))
	}
	out := make([]float64, len(a))
	for i := range a {
		if b[i] <= 0 {
			return nil, fmt.Errorf("pair %d: the second run took %v", i+1, b[i])
		}
		out[i] = float64(a[i]) / float64(b[i])
	}
	return out, nil
}

// median returns the middle value (the mean of the two middle values of an
// even count); NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianDuration is median over durations.
func medianDuration(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(median(xs))
}

// spread summarises ratios.
func spread(xs []float64) Spread {
	s := Spread{Median: median(xs), Min: math.NaN(), Max: math.NaN(), N: len(xs)}
	for i, x := range xs {
		if i == 0 || x < s.Min {
			s.Min = x
		}
		if i == 0 || x > s.Max {
			s.Max = x
		}
	}
	return s
}

// Counts is one cycle's counters as internal/perfstat writes them to the
// OODA_STATS file.
type Counts struct {
	DurableWrites int64 `json:"durable_writes"`
	Appends       int64 `json:"appends"`
	FileSyncs     int64 `json:"file_fsyncs"`
	DirSyncs      int64 `json:"dir_fsyncs"`
	Processes     int64 `json:"processes"`
	// Steps are where the wall time went, from the phases a build that
	// records them writes: each phase reached and the milliseconds since
	// the one before (the first: since the process's Go code started),
	// then the time outside Go — the process's start before its packages
	// are initialized, and its exit.
	Steps []Step `json:"steps,omitempty"`
}

// Step is one phase of a cycle and the milliseconds it took.
type Step struct {
	Name string  `json:"name"`
	MS   float64 `json:"ms"`
}

// outsideGo names the step of a cycle spent before its Go code ran and
// after its last phase.
const outsideGo = "process start and exit"

// Durable is what a cycle must make durable: whole files written and
// synced appends. Each costs at least one file fsync, the floor the cycle
// is compared against.
func (c Counts) Durable() int64 { return c.DurableWrites + c.Appends }

// parseStats reads an OODA_STATS file. Every counter must be present: a
// file from another program, or cut short, is refused rather than read as
// zeros, which would make the floor figure look better than it is.
func parseStats(b []byte) (Counts, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return Counts{}, fmt.Errorf("stats: %w", err)
	}
	var c Counts
	fields := []struct {
		key string
		dst *int64
	}{
		{"durable_writes", &c.DurableWrites},
		{"appends", &c.Appends},
		{"file_fsyncs", &c.FileSyncs},
		{"dir_fsyncs", &c.DirSyncs},
		{"processes", &c.Processes},
	}
	for _, f := range fields {
		v, ok := raw[f.key]
		if !ok {
			return Counts{}, fmt.Errorf("stats: /%s: missing", f.key)
		}
		if err := json.Unmarshal(v, f.dst); err != nil {
			return Counts{}, fmt.Errorf("stats: /%s: %w", f.key, err)
		}
		if *f.dst < 0 {
			return Counts{}, fmt.Errorf("stats: /%s: negative count %d", f.key, *f.dst)
		}
	}
	// The phases are optional (older builds write none), but when there
	// they must be in order.
	if v, ok := raw["phases"]; ok {
		var ps []Step
		if err := json.Unmarshal(v, &ps); err != nil {
			return Counts{}, fmt.Errorf("stats: /phases: %w", err)
		}
		last := 0.0
		for i, p := range ps {
			if p.Name == "" || math.IsNaN(p.MS) || p.MS < last {
				return Counts{}, fmt.Errorf("stats: /phases/%d: %q at %v ms, after %v ms", i, p.Name, p.MS, last)
			}
			c.Steps = append(c.Steps, Step{Name: p.Name, MS: p.MS - last})
			last = p.MS
		}
	}
	return c, nil
}

// goMS is how long the process's Go code ran: the sum of its steps.
func (c Counts) goMS() float64 {
	t := 0.0
	for _, s := range c.Steps {
		t += s.MS
	}
	return t
}

// medianCounts takes the median of each counter separately.
func medianCounts(cs []Counts) Counts {
	pick := func(get func(Counts) int64) int64 {
		xs := make([]float64, len(cs))
		for i, c := range cs {
			xs[i] = float64(get(c))
		}
		return int64(math.Round(median(xs)))
	}
	if len(cs) == 0 {
		return Counts{}
	}
	// Each step's median over the cycles that reached it, in the order
	// the cycles reached them.
	var names []string
	byName := map[string][]float64{}
	for _, c := range cs {
		for _, st := range c.Steps {
			if _, seen := byName[st.Name]; !seen {
				names = append(names, st.Name)
			}
			byName[st.Name] = append(byName[st.Name], st.MS)
		}
	}
	var steps []Step
	for _, n := range names {
		steps = append(steps, Step{Name: n, MS: median(byName[n])})
	}
	return Counts{
		Steps:         steps,
		DurableWrites: pick(func(c Counts) int64 { return c.DurableWrites }),
		Appends:       pick(func(c Counts) int64 { return c.Appends }),
		FileSyncs:     pick(func(c Counts) int64 { return c.FileSyncs }),
		DirSyncs:      pick(func(c Counts) int64 { return c.DirSyncs }),
		Processes:     pick(func(c Counts) int64 { return c.Processes }),
	}
}
