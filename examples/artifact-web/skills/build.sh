#!/bin/sh
# A scripted stand-in for the coding agent a real project's build skill
# would run. Cycle N applies line N of plan.txt,
#   upstream_delay_ms fail_every commit|keep what it does
# to service.json, notes it in CHANGES.md, commits it or leaves it
# uncommitted, and reports. It logs the leap variables ooda gave it.
set -eu
echo "cycle $OODA_CYCLE: OODA_CYCLE_MODE=$OODA_CYCLE_MODE OODA_LEAP_MODE=$OODA_LEAP_MODE" \
  "OODA_TARGET_DIMENSION=$OODA_TARGET_DIMENSION OODA_LEAP_MAX_LINES=${OODA_LEAP_MAX_LINES-}" \
  "OODA_LEAP_BRIEF=${OODA_LEAP_BRIEF-}" >> build.log
set -- $(sed -n "${OODA_CYCLE}p" plan.txt)
delay=$1 fail=$2 how=$3
shift 3
printf '{"upstream_delay_ms": %s, "fail_every": %s}\n' "$delay" "$fail" > service.json
echo "- $*" >> CHANGES.md
if [ "$how" = commit ]; then
  git commit --quiet -m "$*" service.json CHANGES.md
fi
printf '{"had_output": true, "artifact_changed": true, "summary": "%s"}\n' "$*" > "$OODA_REPORT"
