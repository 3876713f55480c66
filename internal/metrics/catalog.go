package metrics

// valueType is how a family's samples are typed in the exposition's TYPE
// line.
type valueType int

const (
	untyped valueType = iota
	gauge
	counter
)

// String is the type's name on a TYPE line.
func (t valueType) String() string {
	switch t {
	case gauge:
		return "gauge"
	case counter:
		return "counter"
	}
	return "untyped"
}

// metric is one series family: its name, help text, type and labels. The
// catalog below is the only place a family is defined; docs/dashboard.md
// lists every one of them with the same help text (a test compares them).
type metric struct {
	name   string
	help   string
	typ    valueType
	labels []string
	// buckets are a histogram's upper bounds; nil for a gauge or counter.
	buckets []float64
}

// catalog holds every family in the order docs/dashboard.md lists them.
var catalog []*metric

func define(name string, typ valueType, help string, labels ...string) *metric {
	m := &metric{name: name, help: help, typ: typ, labels: labels}
	catalog = append(catalog, m)
	return m
}

// defineHistogram defines a histogram family with the given bucket
// bounds (its typ is unused).
func defineHistogram(name, help string, buckets []float64, labels ...string) *metric {
	m := define(name, untyped, help, labels...)
	m.buckets = buckets
	return m
}

// skillBuckets span a built-in check's milliseconds to a coding agent's
// hour, so that both ends of what a skill may be show in the histogram.
var skillBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600}

// The families. A help text says what the value is and where it comes
// from, so that a reader of the exposition alone can tell.
var (
	mHaltActive = define("ooda_halt_active", gauge,
		"1 when the HALT file exists and the loop is stopped, else 0.")
	mCycles = define("ooda_cycles_total", counter,
		"Cycles the loop has run (state.json cycle_count).")
	mCycleResults = define("ooda_cycle_results", gauge,
		"Cycles in the history by their current result type (cycle_log.jsonl with annotations applied, else outcomes.json); a gauge because a later annotation moves a cycle from one type to another. Types outside the known set are counted as other.",
		"result_type")
	mLastCycle = define("ooda_last_cycle_timestamp_seconds", gauge,
		"When the last cycle ran, in Unix seconds (state.json last_cycle).")
	mLastCycleDuration = define("ooda_last_cycle_duration_seconds", gauge,
		"How long the last recorded cycle took, from its start to its record (state.json decision_log elapsed_seconds).")
	mCycleInProgress = define("ooda_cycle_in_progress", gauge,
		"1 while a cycle is running or one was interrupted before it recorded (state.json cycle_in_progress), else 0.")
	mLevel = define("ooda_level", gauge,
		"The progressive-complexity level the loop runs at (config.json).")

	mDomainConfidence = define("ooda_domain_confidence_ratio", gauge,
		"A configured domain's confidence, 0 to 1 (confidence.json; the initial confidence for a domain it does not hold yet).",
		"domain")
	mDomainStatus = define("ooda_domain_status", gauge,
		"1 for a configured domain's status as its skill last reported it (its state file), disabled or the configured status when it does not run, unknown when the skill has not said.",
		"domain", "status")
	mDomainAlerts = define("ooda_domain_alerts", gauge,
		"Alerts in a configured domain's state file.",
		"domain")
	mDomainCriticalAlerts = define("ooda_domain_critical_alerts", gauge,
		"Critical alerts in a configured domain's state file.",
		"domain")
	mDomainLastRun = define("ooda_domain_last_run_timestamp_seconds", gauge,
		"When a configured domain last ran, in Unix seconds (its state file's last_run, else state.json domain_last_run).",
		"domain")
	mDomainExecutions = define("ooda_domain_executions_total", counter,
		"Skill runs per configured domain (metrics.json domain_executions).",
		"domain")
	mSkillExecutions = define("ooda_skill_executions_total", counter,
		"Skill runs, chain members included (metrics.json total_skill_executions).")
	mSkillDuration = defineHistogram("ooda_skill_duration_seconds",
		"How long each cycle's skill ran, in seconds, by skill (cycle_log.jsonl skill_seconds; chain steps, and lines without it, are not counted). A skill the configuration does not name is counted as other.",
		skillBuckets, "skill")

	mActionsPending = define("ooda_actions_pending", gauge,
		"Pending actions in the action queue (action_queue.json).")
	mActionsAdded = define("ooda_actions_added_total", counter,
		"Actions added to the queue (metrics.json actions_added).")
	mActionsResolved = define("ooda_actions_resolved_total", counter,
		"Actions resolved (metrics.json actions_resolved).")
	mPRsCreated = define("ooda_prs_created_total", counter,
		"Pull requests the loop opened (metrics.json total_prs_created).")
	mPRsMerged = define("ooda_prs_merged_total", counter,
		"Pull requests of the loop that were merged (metrics.json total_prs_merged).")
	mPRsRejected = define("ooda_prs_rejected_total", counter,
		"Pull requests of the loop that were closed unmerged (metrics.json total_prs_rejected).")
	mMemosPending = define("ooda_memos_pending", gauge,
		"One-shot score adjustments the next cycle consumes (memos.json score_adjustments).")
	mInterventions = define("ooda_interventions_active", gauge,
		"Active multi-cycle score interventions (memos.json interventions).")
	mGoalsActive = define("ooda_goals_active", gauge,
		"Goals with status active (goals.json).")

	mSaturation = define("ooda_saturation_cycles", gauge,
		"Consecutive cycles without actionable output (state.json consecutive_observe_only_cycles).")
	mSaturationThreshold = define("ooda_saturation_halt_threshold_cycles", gauge,
		"The saturation count that halts the loop (saturation.halt_threshold when saturation.auto_halt is on); 0 never halts.")
	mSilentFailures = define("ooda_silent_failures", gauge,
		"Consecutive failed skill runs and records (state.json consecutive_silent_failures).")
	mSilentFailuresThreshold = define("ooda_silent_failures_halt_threshold", gauge,
		"The failure count that halts the loop (safety.max_silent_failures); 0 never halts.")

	mCostToday = define("ooda_cost_today_usd", gauge,
		"Estimated spend today, UTC, in US dollars (cost_ledger.json; 0 when the ledger is of another day).")
	mCostLimit = define("ooda_cost_daily_limit_usd", gauge,
		"The daily spend cap in US dollars (cost.daily_limit_usd).")
	mCostWarning = define("ooda_cost_warning_threshold_ratio", gauge,
		"The share of the daily cap at which the loop warns (cost.warning_threshold_pct / 100).")
	mCostTotal = define("ooda_cost_usd_total", counter,
		"Estimated spend over the whole history in US dollars, as the scorecard counts it (cycle_log.jsonl cost_usd, else metrics.json, else the ledger).")

	mLoopValue = define("ooda_scorecard_loop_value_ratio", gauge,
		"Loop value over all cycles: the mean quality multiplier, 0 to 1 (the Loop Scorecard).")
	mTaskCompletion = define("ooda_scorecard_task_completion_ratio", gauge,
		"Share of all cycles whose pull request was merged (the Loop Scorecard).")
	mFutile = define("ooda_scorecard_futile_cycles_ratio", gauge,
		"Share of all cycles that changed nothing, futile or error (the Loop Scorecard).")
	mPRMerge = define("ooda_scorecard_pr_merge_ratio", gauge,
		"Share of the history's pull requests that were merged (the Loop Scorecard).")
	mPRHold = define("ooda_scorecard_pr_merge_and_hold_ratio", gauge,
		"Share of the merged pull requests that held, not reverted (the Loop Scorecard).")
	mActionResolution = define("ooda_scorecard_action_resolution_ratio", gauge,
		"Actions resolved over actions added, all time (the Loop Scorecard).")
	mMissionHit = define("ooda_scorecard_mission_hit_ratio", gauge,
		"On-mission share of the cycles that produced value (the Loop Scorecard).")
	mGoalProgress = define("ooda_scorecard_goal_progress_ratio", gauge,
		"Mean progress of the active goals, 0 to 1 (the Loop Scorecard).")
	mGapResolution = define("ooda_scorecard_skill_gap_resolution_ratio", gauge,
		"Share of the skill gaps resolved (the Loop Scorecard).")
	mLessonApplication = define("ooda_scorecard_lesson_application_ratio", gauge,
		"Share of the reflections whose lesson was applied (the Loop Scorecard).")
	mArtifactQuality = define("ooda_scorecard_artifact_quality_ratio", gauge,
		"Mean artifact score of the graded cycles, 0 to 1 (the Loop Scorecard).")
	mArtifactBar = define("ooda_scorecard_artifact_bar_ratio", gauge,
		"The quality bar the artifact is graded against, 0 to 1 (the rubric's bar_coast or bar, else 0.65).")
	mGradeScore = define("ooda_scorecard_grade_score_ratio", gauge,
		"The composite the scorecard's letter grade comes from, 0 to 1 (A from 0.8, B 0.65, C 0.5, D 0.35).")
	mCostPerSuccess = define("ooda_scorecard_cost_per_successful_cycle_usd", gauge,
		"Spend over the cycles whose pull request was merged, in US dollars (the Loop Scorecard).")

	mSessionRunning = define("ooda_session_running", gauge,
		"1 while an ooda run session runs, else 0.")
	mSessionIteration = define("ooda_session_iteration", gauge,
		"Iterations the running or last ooda run session has judged.")
	mSessionMaxIterations = define("ooda_session_max_iterations", gauge,
		"The iteration limit of the running or last session; 0 for none (--forever).")
	mQuarantined = define("ooda_session_quarantined_targets", gauge,
		"Targets the running session has quarantined for oscillation; 0 when no session runs.")
	mDeferred = define("ooda_session_deferred_findings", gauge,
		"Findings the running or last session deferred for stagnation and has not resolved.")

	mCorrupt = define("ooda_state_file_corrupt", gauge,
		"1 for each file that could not be read (corrupt, refused, or not a regular file); the metrics it feeds are left out.",
		"file")
)
