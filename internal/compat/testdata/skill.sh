#!/bin/sh
# A stand-in observe skill: records that it ran and writes its domain state.
echo "$OODA_DOMAIN" >> ran.txt
printf '{"last_run": "%s", "status": "healthy", "alerts": []}\n' "$OODA_NOW" > "$OODA_STATE_FILE"
