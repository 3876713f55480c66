#!/bin/sh
# Example test checker: records a test run and proposes one action when it
# finds an untested file.
set -eu
cat > "$OODA_STATE_FILE" <<JSON
{ "last_run": "$OODA_NOW", "status": "passed", "metrics": { "coverage_pct": 78.5 } }
JSON
cat > "$OODA_REPORT" <<JSON
{
  "summary": "tests pass; coverage 78.5%",
  "actions": [
    { "title": "Add tests for the retry wrapper", "reach": 3, "impact": 2, "confidence": 0.8, "effort": 1,
      "related_files": ["src/retry.js"] }
  ],
  "test_status": "passed",
  "cost_usd": 0.01
}
JSON
echo "tests: passed"
