#!/bin/sh
# Example health scanner: records a health check in the domain state file.
# Every fourth cycle it sees a latency spike and raises a warning alert.
set -eu
alerts='[]'
status=healthy
if [ $((OODA_CYCLE % 4)) -eq 0 ]; then
  alerts='[{"severity": "warning", "id": "latency", "message": "p95 latency 820ms > 500ms"}]'
  status=degraded
fi
cat > "$OODA_STATE_FILE" <<JSON
{
  "last_run": "$OODA_NOW",
  "status": "$status",
  "alerts": $alerts,
  "metrics": { "p95_ms": $(( OODA_CYCLE % 4 == 0 ? 820 : 180 + OODA_CYCLE )) }
}
JSON
echo "health: $status"
