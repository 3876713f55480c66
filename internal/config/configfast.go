package config

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Decoding config.json without encoding/json. Every process loads the
// configuration once, and encoding/json first builds its reflection
// tables of Config and of each struct under it — most of what decoding a
// small configuration costs. decodeConfigFast decodes the common shape by
// hand instead, with the same rules: keys written exactly as the fields'
// names, values of the fields' own JSON types, every unknown key skipped,
// objects decoded into the defaults already there (a map gains entries, a
// struct keeps the fields the file leaves out). Anything it is not sure to
// decode exactly as encoding/json does — a key that matches a field only
// regardless of case, a key twice in one object, an escape or a byte that
// is not ASCII in a key or string, a null, an integer a field cannot
// hold, a number a float64 cannot hold, a value of another type, domains
// the one-pass decoder does not take — makes it give up, and decodeConfig
// decodes the whole document the old way, which also words every error.

// decodeConfigFast is decodeConfig's result when the document b (valid
// JSON) has the common shape; ok is false when b must be decoded by
// encoding/json.
func decodeConfigFast(b []byte) (c *Config, ok bool) {
	c = Default()
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	if !fastFields(b[i:], configKeys, func(k string, v []byte) bool { return c.setFast(k, v) }) {
		return nil, false
	}
	return c, true
}

// configKeys and the other ...Keys lists are the JSON keys of each struct,
// as its tags write them (TestFastKeysAreTheTags compares them).
var configKeys = []string{"schema_version", "project", "mission", "domains", "domain_dependencies", "implementation", "scoring",
	"confidence", "safety", "progressive_complexity", "signals", "saturation", "memory", "season_modes", "active_context",
	"output", "test_command", "test_timeout_seconds", "health_endpoints", "health_check_timeout_seconds", "notifications",
	"cost", "quality_rubric", "leap", "goal_completion_idle", "skills", "agent", "git", "forge", "session", "judge", "eval",
	"deploy_workflow", "deploy_workflow_inputs", "deploy_monitor_timeout_seconds", "deploy_health_wait_seconds"}

func (c *Config) setFast(k string, v []byte) bool {
	switch k {
	case "schema_version":
		return fastStr(v, &c.SchemaVersion)
	case "project":
		p := &c.Project
		return fastFields(v, projectKeys, func(k string, v []byte) bool {
			switch k {
			case "name":
				return fastStr(v, &p.Name)
			case "locale":
				return fastStr(v, &p.Locale)
			case "timezone":
				return fastStr(v, &p.Timezone)
			}
			return false
		})
	case "mission":
		return fastStr(v, &c.Mission)
	case "domains":
		ds, ok := unmarshalDomainsFast(v)
		c.Domains = ds
		return ok
	case "domain_dependencies":
		return fastRaw(v, &c.DomainDependencies)
	case "implementation":
		return c.Implementation.setFast(v)
	case "scoring":
		return c.Scoring.setFast(v)
	case "confidence":
		return c.Confidence.setFast(v)
	case "safety":
		return c.Safety.setFast(v)
	case "progressive_complexity":
		return c.ProgressiveComplex.setFast(v)
	case "signals":
		return c.Signals.setFast(v)
	case "saturation":
		return c.Saturation.setFast(v)
	case "memory":
		return c.Memory.setFast(v)
	case "season_modes":
		return c.SeasonModes.setFast(v)
	case "active_context":
		a := &c.ActiveContext
		return fastFields(v, activeContextKeys, func(k string, v []byte) bool {
			switch k {
			case "path":
				return fastStrPtr(v, &a.Path)
			case "refresh_skill":
				return fastStrPtr(v, &a.RefreshSkill)
			case "refresh_interval_hours":
				return fastFloat(v, &a.RefreshIntervalHours)
			}
			return false
		})
	case "output":
		o := &c.Output
		return fastFields(v, outputKeys, func(k string, v []byte) bool { return fastBool(v, &o.CycleCard) })
	case "test_command":
		return fastStr(v, &c.TestCommand)
	case "test_timeout_seconds":
		return fastFloat(v, &c.TestTimeoutSeconds)
	case "health_endpoints":
		if len(v) == 0 || v[0] != '[' {
			return false
		}
		list := []json.RawMessage{}
		if !eachElement(v, func(e []byte) bool {
			if e[0] == 'n' {
				return false // null: encoding/json's own rule decides
			}
			list = append(list, append(json.RawMessage(nil), e...))
			return true
		}) {
			return false
		}
		c.HealthEndpoints = list
		return true
	case "health_check_timeout_seconds":
		return fastFloat(v, &c.HealthCheckTimeout)
	case "notifications":
		return fastRaw(v, &c.Notifications)
	case "cost":
		return c.Cost.setFast(v)
	case "quality_rubric":
		return fastRaw(v, &c.QualityRubric)
	case "leap":
		return c.Leap.setFast(v)
	case "goal_completion_idle":
		return fastBool(v, &c.GoalCompletionIdle)
	case "skills":
		if c.Skills == nil {
			if len(v) == 0 || v[0] != '{' {
				return false
			}
			c.Skills = map[string]SkillSpec{}
		}
		return fastMap(v, func(k string, v []byte) bool {
			var s SkillSpec
			if !s.setFast(v) {
				return false
			}
			c.Skills[k] = s
			return true
		})
	case "agent":
		return c.Agent.setFast(v)
	case "git":
		g := &c.Git
		return fastFields(v, gitKeys, func(k string, v []byte) bool {
			if k == "commit_state" {
				return fastBoolPtr(v, &g.CommitState)
			}
			return fastBoolPtr(v, &g.Push)
		})
	case "forge":
		f := &c.Forge
		return fastFields(v, forgeKeys, func(k string, v []byte) bool {
			switch k {
			case "provider":
				return fastStr(v, &f.Provider)
			case "repo":
				return fastStr(v, &f.Repo)
			case "api_url":
				return fastStr(v, &f.APIURL)
			case "default_branch":
				return fastStr(v, &f.DefaultBranch)
			case "timeout":
				return fastStr(v, &f.Timeout)
			}
			return false
		})
	case "session":
		return c.Session.setFast(v)
	case "eval":
		e := &c.Eval
		return fastFields(v, evalKeys, func(k string, v []byte) bool {
			switch k {
			case "enabled":
				return fastBool(v, &e.Enabled)
			case "model":
				return fastStr(v, &e.Model)
			case "grade_on":
				return fastStrList(v, &e.GradeOn)
			}
			return false
		})
	case "judge":
		j := &c.Judge
		return fastFields(v, judgeKeys, func(k string, v []byte) bool {
			switch k {
			case "command":
				return fastStrList(v, &j.Command)
			case "timeout":
				return fastStr(v, &j.Timeout)
			}
			return j.EnvPolicy.setFast(k, v)
		})
	case "deploy_workflow":
		return fastRaw(v, &c.DeployWorkflow)
	case "deploy_workflow_inputs":
		return fastRaw(v, &c.DeployWorkflowInputs)
	case "deploy_monitor_timeout_seconds":
		return fastFloatPtr(v, &c.DeployMonitorTimeoutSeconds)
	case "deploy_health_wait_seconds":
		return fastFloatPtr(v, &c.DeployHealthWaitSeconds)
	}
	return false
}

var (
	projectKeys       = []string{"name", "locale", "timezone"}
	activeContextKeys = []string{"path", "refresh_skill", "refresh_interval_hours"}
	outputKeys        = []string{"cycle_card"}
	gitKeys           = []string{"commit_state", "push"}
	forgeKeys         = []string{"provider", "repo", "api_url", "default_branch", "timeout"}
	judgeKeys         = []string{"command", "timeout", "env_passthrough", "inherit_env"}
)

var implementationKeys = []string{"enabled", "weight", "primary_skill", "observe_loop_escape_bonus", "mission_alignment", "branch_prefix"}

func (m *Implementation) setFast(b []byte) bool {
	return fastFields(b, implementationKeys, func(k string, v []byte) bool {
		switch k {
		case "enabled":
			return fastBool(v, &m.Enabled)
		case "weight":
			return fastFloat(v, &m.Weight)
		case "primary_skill":
			return fastStr(v, &m.PrimarySkill)
		case "observe_loop_escape_bonus":
			return fastFloat(v, &m.ObserveLoopEscapeBonus)
		case "mission_alignment":
			return fastFloatPtr(v, &m.MissionAlignment)
		case "branch_prefix":
			return fastStr(v, &m.BranchPrefix)
		}
		return false
	})
}

var (
	scoringKeys = []string{"staleness_curve", "balance_enabled", "balance_weight", "goal_weight", "confidence_weight",
		"hours_if_never_run", "implementation_formula", "rice_extensions", "mission_weight", "dry_domain_dampen",
		"monitor_dry_dampen", "off_mission_threshold", "off_mission_dampen", "adaptive"}
	adaptiveKeys    = []string{"enabled", "value_weight", "yield_staleness", "mission_focus", "goal_pull_weight", "window"}
	implFormulaKeys = []string{"pending_multiplier", "age_multiplier", "rice_multiplier", "open_pr_penalty"}
)

func (s *Scoring) setFast(b []byte) bool {
	return fastFields(b, scoringKeys, func(k string, v []byte) bool {
		switch k {
		case "staleness_curve":
			return fastStr(v, &s.StalenessCurve)
		case "balance_enabled":
			return fastBool(v, &s.BalanceEnabled)
		case "balance_weight":
			return fastFloat(v, &s.BalanceWeight)
		case "goal_weight":
			return fastFloat(v, &s.GoalWeight)
		case "confidence_weight":
			return fastFloat(v, &s.ConfidenceWeight)
		case "hours_if_never_run":
			return fastFloat(v, &s.HoursIfNeverRun)
		case "implementation_formula":
			f := &s.ImplementationFormula
			return fastFields(v, implFormulaKeys, func(k string, v []byte) bool {
				switch k {
				case "pending_multiplier":
					return fastFloat(v, &f.PendingMultiplier)
				case "age_multiplier":
					return fastFloat(v, &f.AgeMultiplier)
				case "rice_multiplier":
					return fastFloat(v, &f.RiceMultiplier)
				case "open_pr_penalty":
					return fastFloat(v, &f.OpenPRPenalty)
				}
				return false
			})
		case "rice_extensions":
			// Only the plain form, every weight a number; as its
			// UnmarshalJSON does, a new map replaces the old.
			if len(v) == 0 || v[0] != '{' {
				return false
			}
			out := RiceExtensions{}
			if !fastMap(v, func(k string, v []byte) bool {
				w, ok := fastNumber(v)
				out[k] = w
				return ok
			}) {
				return false
			}
			s.RiceExtensions = out
			return true
		case "mission_weight":
			return fastFloat(v, &s.MissionWeight)
		case "dry_domain_dampen":
			return fastFloat(v, &s.DryDomainDampen)
		case "monitor_dry_dampen":
			return fastFloat(v, &s.MonitorDryDampen)
		case "off_mission_threshold":
			return fastFloat(v, &s.OffMissionThreshold)
		case "off_mission_dampen":
			return fastFloat(v, &s.OffMissionDampen)
		case "adaptive":
			a := &s.Adaptive
			return fastFields(v, adaptiveKeys, func(k string, v []byte) bool {
				switch k {
				case "enabled":
					return fastBool(v, &a.Enabled)
				case "value_weight":
					return fastFloat(v, &a.ValueWeight)
				case "yield_staleness":
					return fastBool(v, &a.YieldStaleness)
				case "mission_focus":
					return fastBool(v, &a.MissionFocus)
				case "goal_pull_weight":
					return fastFloat(v, &a.GoalPullWeight)
				case "window":
					return fastInt(v, &a.Window)
				}
				return false
			})
		}
		return false
	})
}

var confidenceKeys = []string{"initial", "merge_boost", "reject_penalty", "min", "max", "observation_micro_adjustments"}

func (m *ConfidenceCfg) setFast(b []byte) bool {
	return fastFields(b, confidenceKeys, func(k string, v []byte) bool {
		switch k {
		case "initial":
			return fastFloat(v, &m.Initial)
		case "merge_boost":
			return fastFloat(v, &m.MergeBoost)
		case "reject_penalty":
			return fastFloat(v, &m.RejectPenalty)
		case "min":
			return fastFloat(v, &m.Min)
		case "max":
			return fastFloat(v, &m.Max)
		case "observation_micro_adjustments":
			return fastBool(v, &m.ObservationMicroAdjustments)
		}
		return false
	})
}

var safetyKeys = []string{"halt_file", "confidence_threshold", "min_cycle_interval_minutes", "max_prs_per_cycle",
	"first_cycle_observe_only", "max_files_per_pr", "max_lines_per_pr", "protected_paths", "skill_allowlist",
	"lock_timeout_minutes", "max_chain_depth", "max_silent_failures", "generated_file_patterns", "enable_rollback",
	"enable_auto_merge", "auto_merge_max_files", "auto_merge_max_lines", "risk_rules", "max_read_mib"}

func (s *Safety) setFast(b []byte) bool {
	return fastFields(b, safetyKeys, func(k string, v []byte) bool {
		switch k {
		case "halt_file":
			return fastStr(v, &s.HaltFile)
		case "confidence_threshold":
			return fastFloat(v, &s.ConfidenceThreshold)
		case "min_cycle_interval_minutes":
			return fastFloat(v, &s.MinCycleIntervalMin)
		case "max_prs_per_cycle":
			return fastInt(v, &s.MaxPRsPerCycle)
		case "first_cycle_observe_only":
			return fastBool(v, &s.FirstCycleObserveOnly)
		case "max_files_per_pr":
			return fastInt(v, &s.MaxFilesPerPR)
		case "max_lines_per_pr":
			return fastInt(v, &s.MaxLinesPerPR)
		case "protected_paths":
			return fastStrList(v, &s.ProtectedPaths)
		case "skill_allowlist":
			return fastStrList(v, &s.SkillAllowlist)
		case "lock_timeout_minutes":
			return fastFloat(v, &s.LockTimeoutMinutes)
		case "max_chain_depth":
			return fastInt(v, &s.MaxChainDepth)
		case "max_silent_failures":
			return fastInt(v, &s.MaxSilentFailures)
		case "generated_file_patterns":
			return fastStrList(v, &s.GeneratedFilePatterns)
		case "enable_rollback":
			return fastBool(v, &s.EnableRollback)
		case "enable_auto_merge":
			return fastBool(v, &s.EnableAutoMerge)
		case "auto_merge_max_files":
			return fastInt(v, &s.AutoMergeMaxFiles)
		case "auto_merge_max_lines":
			return fastInt(v, &s.AutoMergeMaxLines)
		case "risk_rules":
			return fastRaw(v, &s.RiskRules)
		case "max_read_mib":
			return fastFloat(v, &s.MaxReadMiB)
		}
		return false
	})
}

var (
	progressiveKeys = []string{"current_level", "levels", "last_level_change"}
	levelKeys       = []string{"name", "domains", "implementation", "auto_merge"}
)

func (p *Progressive) setFast(b []byte) bool {
	return fastFields(b, progressiveKeys, func(k string, v []byte) bool {
		switch k {
		case "current_level":
			return fastInt(v, &p.CurrentLevel)
		case "levels":
			if p.Levels == nil {
				if len(v) == 0 || v[0] != '{' {
					return false
				}
				p.Levels = map[string]Level{}
			}
			return fastMap(v, func(name string, v []byte) bool {
				var l Level
				if !fastFields(v, levelKeys, func(k string, v []byte) bool {
					switch k {
					case "name":
						return fastStr(v, &l.Name)
					case "domains":
						return fastRaw(v, &l.Domains)
					case "implementation":
						return fastBool(v, &l.Implementation)
					case "auto_merge":
						return fastBool(v, &l.AutoMerge)
					}
					return false
				}) {
					return false
				}
				p.Levels[name] = l
				return true
			})
		case "last_level_change":
			return fastRaw(v, &p.LastLevelChange)
		}
		return false
	})
}

var signalsKeys = []string{"health_alert_bonus", "alert_cooldown_hours", "max_consecutive_alert_cycles",
	"stale_after_change_hours", "stale_after_change_bonus", "queue_pressure_threshold", "queue_pressure_bonus",
	"queue_age_hours", "queue_age_bonus"}

func (s *Signals) setFast(b []byte) bool {
	return fastFields(b, signalsKeys, func(k string, v []byte) bool {
		switch k {
		case "health_alert_bonus":
			return fastFloat(v, &s.HealthAlertBonus)
		case "alert_cooldown_hours":
			return fastFloat(v, &s.AlertCooldownHours)
		case "max_consecutive_alert_cycles":
			return fastInt(v, &s.MaxConsecutiveAlertCycles)
		case "stale_after_change_hours":
			return fastFloat(v, &s.StaleAfterChangeHours)
		case "stale_after_change_bonus":
			return fastFloat(v, &s.StaleAfterChangeBonus)
		case "queue_pressure_threshold":
			return fastInt(v, &s.QueuePressureThreshold)
		case "queue_pressure_bonus":
			return fastFloat(v, &s.QueuePressureBonus)
		case "queue_age_hours":
			return fastFloat(v, &s.QueueAgeHours)
		case "queue_age_bonus":
			return fastFloat(v, &s.QueueAgeBonus)
		}
		return false
	})
}

var saturationKeys = []string{"warn_threshold", "boost_threshold", "halt_threshold", "auto_halt", "implementation_boost"}

func (s *Saturation) setFast(b []byte) bool {
	return fastFields(b, saturationKeys, func(k string, v []byte) bool {
		switch k {
		case "warn_threshold":
			return fastInt(v, &s.WarnThreshold)
		case "boost_threshold":
			return fastInt(v, &s.BoostThreshold)
		case "halt_threshold":
			return fastInt(v, &s.HaltThreshold)
		case "auto_halt":
			return fastBool(v, &s.AutoHalt)
		case "implementation_boost":
			return fastFloat(v, &s.ImplementationBoost)
		}
		return false
	})
}

var memoryKeys = []string{"working_memory_size", "episode_retention_weeks", "contrarian_check_interval",
	"action_queue_decay_days", "action_queue_decay_amount", "principle_similarity_threshold",
	"principle_min_occurrences", "reflection_recall_count", "reflections_buffer_size", "outcomes_buffer_size"}

func (m *Memory) setFast(b []byte) bool {
	return fastFields(b, memoryKeys, func(k string, v []byte) bool {
		switch k {
		case "working_memory_size":
			return fastInt(v, &m.WorkingMemorySize)
		case "episode_retention_weeks":
			return fastInt(v, &m.EpisodeRetentionWeeks)
		case "contrarian_check_interval":
			return fastInt(v, &m.ContrarianCheckInterval)
		case "action_queue_decay_days":
			return fastFloat(v, &m.ActionQueueDecayDays)
		case "action_queue_decay_amount":
			return fastFloat(v, &m.ActionQueueDecayAmount)
		case "principle_similarity_threshold":
			return fastFloat(v, &m.PrincipleSimilarityThreshold)
		case "principle_min_occurrences":
			return fastInt(v, &m.PrincipleMinOccurrences)
		case "reflection_recall_count":
			return fastInt(v, &m.ReflectionRecallCount)
		case "reflections_buffer_size":
			return fastInt(v, &m.ReflectionsBufferSize)
		case "outcomes_buffer_size":
			return fastInt(v, &m.OutcomesBufferSize)
		}
		return false
	})
}

var (
	seasonModesKeys = []string{"enabled", "current_mode", "modes"}
	seasonModeKeys  = []string{"weight_overrides", "disabled_domains", "signal_bonuses"}
)

func (s *SeasonModes) setFast(b []byte) bool {
	return fastFields(b, seasonModesKeys, func(k string, v []byte) bool {
		switch k {
		case "enabled":
			return fastBool(v, &s.Enabled)
		case "current_mode":
			return fastStr(v, &s.CurrentMode)
		case "modes":
			if s.Modes == nil {
				if len(v) == 0 || v[0] != '{' {
					return false
				}
				s.Modes = map[string]SeasonMode{}
			}
			return fastMap(v, func(name string, v []byte) bool {
				var m SeasonMode
				if !fastFields(v, seasonModeKeys, func(k string, v []byte) bool {
					switch k {
					case "weight_overrides":
						return fastFloatMap(v, &m.WeightOverrides)
					case "disabled_domains":
						return fastStrList(v, &m.DisabledDomains)
					case "signal_bonuses":
						return fastFloatMap(v, &m.SignalBonuses)
					}
					return false
				}) {
					return false
				}
				s.Modes[name] = m
				return true
			})
		}
		return false
	})
}

var costKeys = []string{"daily_limit_usd", "warning_threshold_pct", "max_backfill_cycles"}

func (m *Cost) setFast(b []byte) bool {
	return fastFields(b, costKeys, func(k string, v []byte) bool {
		switch k {
		case "daily_limit_usd":
			return fastFloat(v, &m.DailyLimitUSD)
		case "warning_threshold_pct":
			return fastFloat(v, &m.WarningThresholdPct)
		case "max_backfill_cycles":
			return fastInt(v, &m.MaxBackfillCycles)
		}
		return false
	})
}

var evalKeys = []string{"enabled", "model", "grade_on"}

var leapKeys = []string{"rewrite_on_stall", "max_lines", "min_dimension_delta", "max_attempts_per_dimension",
	"max_per_day", "gap_weight", "cost_limit_usd", "lock_until_bar", "mega_leap"}

func (l *Leap) setFast(b []byte) bool {
	return fastFields(b, leapKeys, func(k string, v []byte) bool {
		switch k {
		case "rewrite_on_stall":
			return fastBool(v, &l.RewriteOnStall)
		case "max_lines":
			return fastInt(v, &l.MaxLines)
		case "min_dimension_delta":
			return fastFloat(v, &l.MinDimensionDelta)
		case "max_attempts_per_dimension":
			return fastInt(v, &l.MaxAttemptsPerDimension)
		case "max_per_day":
			return fastInt(v, &l.MaxPerDay)
		case "gap_weight":
			return fastFloat(v, &l.GapWeight)
		case "cost_limit_usd":
			return fastFloat(v, &l.CostLimitUSD)
		case "lock_until_bar":
			return fastBool(v, &l.LockUntilBar)
		case "mega_leap":
			return fastRaw(v, &l.MegaLeap)
		}
		return false
	})
}

var skillSpecKeys = []string{"builtin", "command", "timeout", "timeout_minutes", "env", "contract", "env_passthrough", "inherit_env"}

func (s *SkillSpec) setFast(b []byte) bool {
	return fastFields(b, skillSpecKeys, func(k string, v []byte) bool {
		switch k {
		case "builtin":
			return fastStr(v, &s.Builtin)
		case "command":
			return fastStrList(v, &s.Command)
		case "timeout":
			return fastStr(v, &s.Timeout)
		case "timeout_minutes":
			return fastFloat(v, &s.TimeoutMinutes)
		case "env":
			return fastStrMap(v, &s.Env)
		case "contract":
			return fastRaw(v, &s.Contract)
		}
		return s.EnvPolicy.setFast(k, v)
	})
}

var agentKeys = []string{"command", "timeout", "env", "env_passthrough", "inherit_env"}

func (a *Agent) setFast(b []byte) bool {
	return fastFields(b, agentKeys, func(k string, v []byte) bool {
		switch k {
		case "command":
			return fastStrList(v, &a.Command)
		case "timeout":
			return fastStr(v, &a.Timeout)
		case "env":
			return fastStrMap(v, &a.Env)
		}
		return a.EnvPolicy.setFast(k, v)
	})
}

// setFast decodes the member k of a struct that embeds EnvPolicy, whose
// keys are promoted into it.
func (e *EnvPolicy) setFast(k string, v []byte) bool {
	switch k {
	case "env_passthrough":
		return fastStrList(v, &e.EnvPassthrough)
	case "inherit_env":
		return fastBool(v, &e.InheritEnv)
	}
	return false
}

var sessionKeys = []string{"oscillation_threshold", "stagnation_window", "regression_window", "max_iterations",
	"completion", "completion_command"}

func (s *Session) setFast(b []byte) bool {
	return fastFields(b, sessionKeys, func(k string, v []byte) bool {
		switch k {
		case "oscillation_threshold":
			return fastInt(v, &s.OscillationThreshold)
		case "stagnation_window":
			return fastInt(v, &s.StagnationWindow)
		case "regression_window":
			return fastInt(v, &s.RegressionWindow)
		case "max_iterations":
			return fastInt(v, &s.MaxIterations)
		case "completion":
			return fastStr(v, &s.Completion)
		case "completion_command":
			return fastStrList(v, &s.CompletionCommand)
		}
		return false
	})
}

// fastFields calls set with each member of the object b whose key is one
// of keys, a struct's JSON keys; any other key is skipped, as
// encoding/json skips it. It reports false — encoding/json must decode —
// when b is not an object, when set does, when a key is not plain ASCII,
// when a key differs from one of keys only by case (encoding/json would
// take it for that field) or when one of keys comes twice.
func fastFields(b []byte, keys []string, set func(key string, val []byte) bool) bool {
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	var seen uint64 // keys has at most 64 entries
	return eachMember(b, 0, func(k string, v []byte) bool {
		for i, name := range keys {
			if name == k {
				if seen&(1<<i) != 0 {
					return false
				}
				seen |= 1 << i
				return set(k, v)
			}
		}
		for _, name := range keys {
			if equalFoldASCII(name, k) {
				return false
			}
		}
		return true
	})
}

// fastMap calls set with each member of the object b (the entries of a
// map), its key a copy set may keep; false when b is not an object, set
// says false, a key is not plain ASCII or comes twice.
func fastMap(b []byte, set func(key string, val []byte) bool) bool {
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	var seen map[string]bool
	return eachMember(b, 0, func(k string, v []byte) bool {
		if seen == nil {
			seen = map[string]bool{}
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		return set(strings.Clone(k), v)
	})
}

func fastStr(v []byte, p *string) bool {
	s, ok := fastString(v)
	if ok {
		*p = s
	}
	return ok
}

func fastStrPtr(v []byte, p **string) bool {
	s, ok := fastString(v)
	if ok {
		*p = &s
	}
	return ok
}

func fastFloat(v []byte, p *float64) bool {
	f, ok := fastNumber(v)
	if ok {
		*p = f
	}
	return ok
}

func fastFloatPtr(v []byte, p **float64) bool {
	f, ok := fastNumber(v)
	if ok {
		*p = &f
	}
	return ok
}

// fastInt is an int field: a JSON integer it can hold (encoding/json
// refuses a fraction or an exponent for it).
func fastInt(v []byte, p *int) bool {
	if len(v) == 0 || !(v[0] == '-' || ('0' <= v[0] && v[0] <= '9')) {
		return false
	}
	n, err := strconv.ParseInt(string(v), 10, strconv.IntSize)
	if err != nil {
		return false
	}
	*p = int(n)
	return true
}

func fastBool(v []byte, p *bool) bool {
	switch string(v) {
	case "true":
		*p = true
	case "false":
		*p = false
	default:
		return false
	}
	return true
}

func fastBoolPtr(v []byte, p **bool) bool {
	var x bool
	if !fastBool(v, &x) {
		return false
	}
	*p = &x
	return true
}

// fastStrList is a []string field; a new slice replaces the old, as
// encoding/json's values are the same.
func fastStrList(v []byte, p *[]string) bool {
	list, ok := fastStrings(v)
	if ok {
		*p = list
	}
	return ok
}

// fastRaw is a json.RawMessage field: the value as written. A null is
// encoding/json's to decide.
func fastRaw(v []byte, p *json.RawMessage) bool {
	if len(v) == 0 || v[0] == 'n' {
		return false
	}
	*p = append(json.RawMessage(nil), v...)
	return true
}

// fastStrMap is a map[string]string field, entries added to the map
// there (made when nil), as encoding/json adds them.
func fastStrMap(v []byte, p *map[string]string) bool {
	if len(v) == 0 || v[0] != '{' {
		return false
	}
	if *p == nil {
		*p = map[string]string{}
	}
	m := *p
	return fastMap(v, func(k string, v []byte) bool {
		s, ok := fastString(v)
		m[k] = s
		return ok
	})
}

// fastFloatMap is fastStrMap for a map[string]float64.
func fastFloatMap(v []byte, p *map[string]float64) bool {
	if len(v) == 0 || v[0] != '{' {
		return false
	}
	if *p == nil {
		*p = map[string]float64{}
	}
	m := *p
	return fastMap(v, func(k string, v []byte) bool {
		f, ok := fastNumber(v)
		m[k] = f
		return ok
	})
}
