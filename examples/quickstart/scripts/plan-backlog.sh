#!/bin/sh
# Example backlog planner: finds nothing new, and says so in its report.
set -eu
cat > "$OODA_STATE_FILE" <<JSON
{ "last_run": "$OODA_NOW", "status": "idle" }
JSON
printf '{"had_output": false, "summary": "backlog unchanged"}\n' > "$OODA_REPORT"
echo "backlog: nothing new"
