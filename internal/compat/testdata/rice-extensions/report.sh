#!/bin/sh
printf '{"last_run": "%s", "status": "healthy"}\n' "$OODA_NOW" > "$OODA_STATE_FILE"
cat > "$OODA_REPORT" <<'JSON'
{"had_output": true, "summary": "one action",
 "actions": [{"title": "Rotate the signing key", "reach": 1, "impact": 1, "confidence": 1, "effort": 1,
              "extensions": {"timing": 1, "security": 0.5, "unconfigured": 9}}]}
JSON
