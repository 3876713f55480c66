#!/bin/sh
# A scripted stand-in for a coding agent (Claude Code, Codex, Aider…).
# ooda's dev-cycle runs it in a git worktree on a new branch, with the
# task in the file named by $1 ({prompt_file}) and the action's title in
# $OODA_ACTION_TITLE. A real agent would read them and the code; this one
# knows the demo's one bug and makes the same small fix every time, so the
# demo needs no network and no language model.
set -eu
echo "agent: task: ${OODA_ACTION_TITLE:-?} (prompt in ${1:-?})"
if grep -q 'total += it.PriceCents$' cart.go; then
	sed 's/total += it.PriceCents$/total += it.PriceCents * it.Qty/' cart.go > cart.go.new
	mv cart.go.new cart.go
	echo "agent: cart.go: Total multiplies each price by its quantity again"
else
	echo "agent: cart.go has no bug this agent knows; nothing changed"
fi
# A script costs nothing: say so, or dev-cycle charges a model's estimate.
if [ -n "${OODA_AGENT_REPORT:-}" ]; then
	printf '{"cost_usd": 0}\n' > "$OODA_AGENT_REPORT"
fi
