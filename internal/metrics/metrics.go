// Package metrics exposes a project's loop in the Prometheus exposition
// format: the numbers `ooda status` and its scorecard show (cycles by
// result, confidence per domain, saturation, the action queue, cost today
// against the cap, HALT, the last cycle), one family each, named by
// Prometheus conventions (docs/dashboard.md lists them).
//
// It only reads, through the readers the status views use (present.Dashboard,
// present.BuildScorecard, state.Store): no lock is taken and nothing is
// written, so a scrape can never disturb a running cycle. A metric whose
// file is missing or corrupt is left out rather than shown as a default a
// graph would take for a measurement; each file that could not be read is
// named by an ooda_state_file_corrupt series instead.
//
// Read takes one reading (for `ooda status --metrics`); a Collector reads
// afresh at every Write (for a server's /metrics); WriteMany labels every
// series of several projects with project="<name>". The text is written
// here (expose.go), not by a Prometheus client library: that library's
// package initialization alone would add milliseconds to every ooda
// process, and the text format is all that is ever written.
package metrics

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
	"github.com/ooda-loop/ooda/internal/state"
)

// Project is one project to read.
type Project struct {
	// Name is the value of the project label when several projects are
	// exposed together; unused for one project alone.
	Name string
	// Dir is the project root, where config.json and agent/state are.
	Dir string
	// Config is the project's loaded configuration; nil: Dir/config.json
	// is loaded at each reading, so a server sees a changed configuration.
	Config *config.Config
}

// ConfigFile is the name a configuration that cannot be loaded is given in
// ooda_state_file_corrupt when Read loads it itself.
const ConfigFile = "config.json"

// Reading is one reading of a project: its samples, and the files that
// could not be read.
type Reading struct {
	// Corrupt names each file that could not be read, relative to the
	// project root when it is inside it, sorted; the metrics each feeds
	// are left out.
	Corrupt []string
	// Warnings name the same files as the status views name them on
	// stderr ("[WARN] corrupt state file: …"): the full path, and the
	// reason where the view gives one.
	Warnings []string
	samples  []sample
}

// sample is one series of a reading: its family, value and label values
// (already made safe, see labelValue).
type sample struct {
	m      *metric
	v      float64
	labels []string
	// hist is a histogram's observations (m.buckets set).
	hist *histogram
}

// histogram is one histogram series: its count, sum and cumulative
// bucket counts by upper bound (the +Inf bucket is the count, implied
// unless a bound is +Inf).
type histogram struct {
	count   uint64
	sum     float64
	buckets map[float64]uint64
}

func newHistogram(bounds []float64) *histogram {
	h := &histogram{buckets: make(map[float64]uint64, len(bounds))}
	for _, b := range bounds {
		h.buckets[b] = 0
	}
	return h
}

// observe counts v in every bucket whose bound it does not pass.
func (h *histogram) observe(v float64) {
	h.count++
	h.sum += v
	for b := range h.buckets {
		if v <= b {
			h.buckets[b]++
		}
	}
}

// Read reads p at now. A configuration it loads itself (p.Config nil)
// that cannot be loaded gives only ooda_state_file_corrupt{file="config.json"}:
// without it neither the domains nor the state files are known.
func Read(p Project, now time.Time) *Reading {
	cfg := p.Config
	if cfg == nil {
		var err error
		cfg, err = config.LoadProject(filepath.Join(p.Dir, ConfigFile), p.Dir)
		if err != nil {
			r := &Reading{Corrupt: []string{ConfigFile}, Warnings: []string{err.Error()}}
			r.add(mCorrupt, 1, ConfigFile)
			return r
		}
	}
	return read(cfg, state.ForConfig(p.Dir, cfg), now)
}

// add appends a sample; its label values are made safe here, once (a
// text a skill writes freely is cut with labelValue before).
func (r *Reading) add(m *metric, v float64, labels ...string) {
	safe := make([]string, len(labels))
	for i, l := range labels {
		safe[i] = safeValue(l)
	}
	r.samples = append(r.samples, sample{m: m, v: v, labels: safe})
}

// addPtr adds a sample when there is a value.
func (r *Reading) addPtr(m *metric, v *float64) {
	if v != nil {
		r.add(m, *v)
	}
}

// maxLabelRunes caps a label value a skill writes freely: its status is a
// word, and a long one would be refused by a Prometheus server with a
// label_value_length_limit, failing the whole scrape. The other label
// values are bounded already (domain names by the configuration, result
// types by knownResultTypes) or must stay whole to stay distinct (paths).
const maxLabelRunes = 64

// labelValue is safeValue cut to maxLabelRunes characters, the last "…".
func labelValue(s string) string {
	s = safeValue(s)
	if utf8.RuneCountInString(s) <= maxLabelRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == maxLabelRunes-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// safeValue is s with known secrets masked and every character that could
// drive a terminal escaped, except the newline: the exposition format
// writes it as \n itself, as it does a quote and a backslash. Invalid
// UTF-8, which Prometheus refuses, is escaped too.
func safeValue(s string) string { return safetext.Multiline(secret.Redact(s)) }

// knownResultTypes are the result types a cycle is recorded with (6-C9),
// always exposed (0 when no cycle had one), so that a graph of each
// exists from the first cycle; "unknown" is a cycle without one.
var knownResultTypes = []string{
	record.TypeMergedHeld, record.TypeMerged, record.TypeCreated, record.TypeAction, record.TypeObserve,
	record.TypeRejected, record.TypeLeapRegressed, record.TypeError, record.TypeFutile,
}

// Result types outside knownResultTypes: a line without one, and anything
// else a hand-edited or foreign log holds, counted together so that a log
// cannot create series without bound.
const (
	resultUnknown = "unknown"
	resultOther   = "other"
)

// files says which of the files a metric is read from can be used: those
// that exist and were read.
type files struct {
	st      *state.Store
	corrupt map[string]bool
	// evolveBad: the evolve directory itself could not be read, so none
	// of its files was.
	evolveBad bool
}

// ok reports whether the file at path p exists and was read. Lstat opens
// nothing, so a named pipe cannot block it (the readers refuse one, and
// it is then corrupt).
func (f files) ok(p string) bool {
	if f.corrupt[p] {
		return false
	}
	_, err := os.Lstat(p)
	return err == nil
}

// evolve is ok for an evolve file.
func (f files) evolve(name string) bool { return !f.evolveBad && f.ok(f.st.EvolvePath(name)) }

func read(cfg *config.Config, st *state.Store, now time.Time) *Reading {
	r := &Reading{}
	doc := present.Dashboard(cfg, st, now)
	durations := newSkillDurations(cfg)
	sc := present.BuildScorecardSeeing(cfg, st, 0, durations.see)
	// The two counters neither view shows, and the decision log's last
	// elapsed time; corrupt files are named by the views above.
	snap, _ := st.LoadFiles(state.StateFile, state.MetricsFile)
	if snap == nil {
		snap = &state.Snapshot{}
	}

	f := files{st: st, corrupt: map[string]bool{}}
	sessions := st.EvolvePath(state.SessionsDir)
	// Some names carry the reason after the path: the path is the file.
	withReason := []string{st.EvolveDir, st.EvolvePath(state.CycleLogFile), sessions}
	sessionBad := false
	for _, c := range slices.Concat(doc.Corrupt, sc.Corrupt) {
		if !slices.Contains(r.Warnings, c) {
			r.Warnings = append(r.Warnings, c)
		}
		for _, p := range withReason {
			if strings.HasPrefix(c, p+" (") {
				c = p
			}
		}
		f.corrupt[c] = true
		switch {
		case c == st.EvolveDir:
			f.evolveBad = true
		case c == sessions || strings.HasPrefix(c, sessions+string(filepath.Separator)):
			sessionBad = true
		}
	}
	for c := range f.corrupt {
		r.Corrupt = append(r.Corrupt, relName(st.Root, c))
	}
	slices.Sort(r.Corrupt)
	r.Corrupt = slices.Compact(r.Corrupt)

	// HALT: its absence is the value (not halted), and a path that
	// cannot be checked halts (state.Store.HaltExists).
	r.add(mHaltActive, b2f(doc.Halt.Active))
	r.add(mLevel, float64(doc.Level))

	if f.evolve(state.StateFile) {
		s := snap.State
		r.add(mCycles, float64(doc.CycleCount))
		if doc.LastCycle != nil {
			if t, ok := state.ParseTime(*doc.LastCycle); ok {
				r.add(mLastCycle, unixSeconds(t))
			}
		}
		if n := len(s.DecisionLog); n > 0 && s.DecisionLog[n-1].ElapsedSeconds != nil {
			r.add(mLastCycleDuration, *s.DecisionLog[n-1].ElapsedSeconds)
		}
		r.add(mCycleInProgress, b2f(s.CycleInProgress))
		r.add(mSaturation, float64(doc.Breakers.Saturation.Count))
		r.add(mSilentFailures, float64(doc.Breakers.SilentFailures.Count))
	}
	r.add(mSaturationThreshold, float64(doc.Breakers.Saturation.Threshold))
	r.add(mSilentFailuresThreshold, float64(doc.Breakers.SilentFailures.Threshold))

	r.domains(cfg, doc, snap, f)

	if sc.Source != "none" {
		counts := map[string]int{}
		for rt, n := range sc.ResultBreakdown {
			switch {
			case slices.Contains(knownResultTypes, rt), rt == resultUnknown:
				counts[rt] += n
			default:
				counts[resultOther] += n
			}
		}
		for _, rt := range knownResultTypes {
			r.add(mCycleResults, float64(counts[rt]), rt)
		}
		for _, rt := range []string{resultUnknown, resultOther} {
			if counts[rt] > 0 {
				r.add(mCycleResults, float64(counts[rt]), rt)
			}
		}
		r.add(mCostTotal, sc.Totals.CostUSD)
	}
	if sc.Source == state.CycleLogFile {
		durations.add(r)
	}

	if f.evolve(state.ActionQueueFile) {
		r.add(mActionsPending, float64(doc.Actions.Pending))
	}
	if f.evolve(state.MetricsFile) {
		c := snap.Metrics.Counters
		r.add(mSkillExecutions, float64(c.TotalSkillExecutions))
		r.add(mActionsAdded, float64(c.ActionsAdded))
		r.add(mActionsResolved, float64(c.ActionsResolved))
		r.add(mPRsCreated, float64(c.TotalPRsCreated))
		r.add(mPRsMerged, float64(c.TotalPRsMerged))
		r.add(mPRsRejected, float64(c.TotalPRsRejected))
	}
	if f.evolve(state.MemosFile) {
		r.add(mMemosPending, float64(len(doc.Memos.Pending)))
		r.add(mInterventions, float64(len(doc.Memos.Interventions)))
	}
	if f.evolve(state.GoalsFile) {
		r.add(mGoalsActive, float64(sc.ActiveGoals))
	}

	if f.evolve(state.CostLedgerFile) {
		r.add(mCostToday, doc.Cost.TodayUSD)
	}
	r.add(mCostLimit, doc.Cost.LimitUSD)
	r.add(mCostWarning, doc.Cost.WarningPct/100)

	// The scorecard's KPIs over all cycles; each is null, and left out,
	// when its denominator is 0 (or its file could not be read).
	r.addPtr(mLoopValue, sc.LoopValueScore)
	r.addPct(mTaskCompletion, sc.TaskCompletionRatePct)
	r.addPct(mFutile, sc.FutileCycleRatePct)
	r.addPct(mPRMerge, sc.PRMergeRatePct)
	r.addPct(mPRHold, sc.PRMergeAndHoldRatePct)
	r.addPct(mActionResolution, sc.ActionResolutionRatePct)
	r.addPct(mMissionHit, sc.MissionHitPct)
	r.addPct(mGoalProgress, sc.GoalProgressPct)
	r.addPct(mGapResolution, sc.SkillGapResolutionPct)
	r.addPct(mLessonApplication, sc.LessonApplicationPct)
	r.addPtr(mArtifactQuality, sc.ArtifactQuality)
	r.add(mArtifactBar, sc.ArtifactBar)
	r.addPtr(mGradeScore, sc.GradeScore)
	r.addPtr(mCostPerSuccess, sc.CostPerSuccessfulCycle)

	if !sessionBad && !f.evolveBad {
		running := doc.Session != nil && doc.Session.Status == state.SessionRunning
		r.add(mSessionRunning, b2f(running))
		r.add(mQuarantined, float64(len(doc.Quarantined)))
		if s := doc.Session; s != nil {
			r.add(mSessionIteration, float64(s.Iteration))
			r.add(mSessionMaxIterations, float64(s.MaxIterations))
			r.add(mDeferred, float64(len(s.Deferred)))
		}
	}

	for _, c := range r.Corrupt {
		r.add(mCorrupt, 1, c)
	}
	return r
}

// domains adds the per-domain families, for the configured domains in
// their configured order: their names are validated by the configuration,
// so a state file cannot add series.
func (r *Reading) domains(cfg *config.Config, doc present.DashboardDoc, snap *state.Snapshot, f files) {
	confidence := f.evolve(state.ConfidenceFile)
	metricsOK := f.evolve(state.MetricsFile)
	for i, d := range doc.Domains {
		if i >= len(cfg.Domains) || cfg.Domains[i].Name != d.Name {
			// Dashboard makes one row per configured domain, in order;
			// a row that is not its domain's is not trusted.
			continue
		}
		file := f.st.Path(cfg.Domains[i].StateFile)
		if confidence {
			r.add(mDomainConfidence, d.Confidence, d.Name)
		}
		if !f.corrupt[file] {
			r.add(mDomainStatus, 1, d.Name, labelValue(d.Status))
		}
		if f.ok(file) {
			r.add(mDomainAlerts, float64(d.Alerts), d.Name)
			r.add(mDomainCriticalAlerts, float64(d.CriticalAlerts), d.Name)
		}
		if d.LastRun != nil {
			if t, ok := state.ParseTime(*d.LastRun); ok {
				r.add(mDomainLastRun, unixSeconds(t), d.Name)
			}
		}
		if metricsOK {
			r.add(mDomainExecutions, float64(snap.Metrics.Counters.DomainExecutions[d.Name]), d.Name)
		}
	}
}

// skillDurations gathers ooda_skill_duration_seconds from the cycle
// log's lines, one histogram per skill the configuration names.
type skillDurations struct {
	// names maps a configured skill's key (config.SkillKey) to its label:
	// the name as the configuration first spells it.
	names map[string]string
	hists map[string]*histogram
}

// otherSkill labels the durations of skills the configuration does not
// name: a log line's skill is free text, and each name would otherwise
// be a series of its own.
const otherSkill = "other"

func newSkillDurations(cfg *config.Config) *skillDurations {
	d := &skillDurations{names: map[string]string{}, hists: map[string]*histogram{}}
	name := func(s string) {
		if k := config.SkillKey(s); k != "" && d.names[k] == "" {
			d.names[k] = s
		}
	}
	for _, dc := range cfg.Domains {
		name(dc.PrimarySkill)
		for _, c := range dc.Chain {
			name(c)
		}
	}
	name(cfg.Implementation.PrimarySkill)
	if cfg.ActiveContext.RefreshSkill != nil {
		name(*cfg.ActiveContext.RefreshSkill)
	}
	for _, s := range cfg.SkillNames() {
		name(s)
	}
	return d
}

// see takes one cycle's line: its skill_seconds, when it has a finite,
// non-negative one of at most record.MaxSkillSeconds, is an observation of its
// skill.
func (d *skillDurations) see(l state.CycleLogLine) {
	if l.SkillSeconds == nil {
		return
	}
	v := *l.SkillSeconds
	if !(v >= 0 && v <= record.MaxSkillSeconds) {
		return
	}
	label, ok := d.names[config.SkillKey(l.Skill)]
	if !ok {
		label = otherSkill
	}
	h := d.hists[label]
	if h == nil {
		h = newHistogram(skillBuckets)
		d.hists[label] = h
	}
	h.observe(v)
}

// add adds one histogram per skill seen, in the order of their labels.
func (d *skillDurations) add(r *Reading) {
	labels := make([]string, 0, len(d.hists))
	for l := range d.hists {
		labels = append(labels, l)
	}
	slices.Sort(labels)
	for _, l := range labels {
		h := d.hists[l]
		// Durations are recorded to the millisecond: the sum is shown so,
		// not as 0.9910000000000001.
		h.sum = math.Round(h.sum*1e6) / 1e6
		r.add(mSkillDuration, 0, l)
		r.samples[len(r.samples)-1].hist = h
	}
}

// addPct adds a scorecard percentage as a ratio, rounded to the
// percentage's own precision (one decimal place) so that 33.3% is 0.333.
func (r *Reading) addPct(m *metric, pct *float64) {
	if pct != nil {
		r.add(m, math.Round(*pct*10)/1000)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unixSeconds is t in Unix seconds, with its fraction.
func unixSeconds(t time.Time) float64 { return float64(t.Unix()) + float64(t.Nanosecond())/1e9 }

// relName is p relative to root when it is inside it, with forward
// slashes, so that a series names the same file on every machine.
func relName(root, p string) string {
	if rel, err := filepath.Rel(root, p); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return p
}
