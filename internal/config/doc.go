// Package config loads, defaults and validates a project's config.json.
//
// The file is shared with the original OODA-loop project, so the loader is
// deliberately tolerant: every key of the original config.example.json has a
// default, unknown keys never stop a file from loading (inside a section
// they are reported in Config.Warnings, with the nearest known key; notes
// such as __doc__ and unknown top-level sections pass silently), and the
// order of config.domains is preserved
// because it is the last tie-break of the decision. Our own extension keys
// (skills, agent, git, session, judge, domains.*.ooda_phase,
// domains.*.min_interval_hours, domains.*.goal_contribution) only ever add to the original format.
package config
