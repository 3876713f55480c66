#!/bin/sh
# A stand-in skill whose run follows the word in ./behave, written by the
# test before each cycle: "fail" exits 1; "alert" reports a warning alert
# (status degraded); "pr" reports pull request 7; "badreport" writes a
# report of the wrong shape; anything else reports one action. Each run
# appends what it was told and what it did to ran.txt, one line:
#   cycle now domain skill confidence mode status score alerts cost pr
mode=$(cat behave 2>/dev/null)
status=healthy score=0.80 alerts='[]' nalerts=0 cost=0.03 pr=null
case "$mode" in
fail)
	echo "$OODA_CYCLE $OODA_NOW $OODA_DOMAIN $OODA_SKILL $OODA_CONFIDENCE fail - - - - null" >> ran.txt
	exit 1 ;;
alert)
	status=degraded score=0.40 nalerts=1
	alerts='[{"severity": "warning", "id": "latency", "message": "p95 above budget"}]' ;;
pr)
	pr=7 ;;
badreport)
	cost=- ;;
esac
echo "$OODA_CYCLE $OODA_NOW $OODA_DOMAIN $OODA_SKILL $OODA_CONFIDENCE ${mode:-report} $status $score $nalerts $cost $pr" >> ran.txt
printf '{"last_run": "%s", "status": "%s", "score": %s, "alerts": %s}\n' "$OODA_NOW" "$status" "$score" "$alerts" > "$OODA_STATE_FILE"
if [ "$mode" = badreport ]; then
	echo '{"had_output": "yes", "cost_usd": 0.03}' > "$OODA_REPORT"
	exit 0
fi
printf '{"had_output": true, "summary": "ok", "cost_usd": %s, "pr_number": %s, "actions": [{"title": "Follow up on %s run %s", "reach": 2, "impact": 1, "confidence": 1, "effort": 1}]}\n' \
	"$cost" "$pr" "$OODA_DOMAIN" "$OODA_CYCLE" > "$OODA_REPORT"
