#!/bin/sh
# A stand-in observe skill that reports one warning: records that it ran and
# writes its domain state.
echo "$OODA_DOMAIN" >> ran.txt
printf '{"last_run": "%s", "status": "degraded", "alerts": [{"severity": "warning", "message": "p95 above 300 ms"}]}\n' "$OODA_NOW" > "$OODA_STATE_FILE"
