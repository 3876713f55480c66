#!/bin/sh
# Runs one `ooda cycle` in a checked-out repository, then pushes the state
# commit the cycle made (docs/cycle.md, "The record (Step 6)", 6-D) to the
# branch's upstream. It is the body of action.yml and runs the same way on a
# laptop, from cron and in a Kubernetes CronJob (the container image holds
# it as /usr/local/bin/ooda-cycle-push): docs/running.md. Plain POSIX sh, so
# the small image needs no bash.
#
# Run it in the project's root (the directory holding config.json).
# Environment:
#   OODA_BIN         the ooda binary (default: ooda on PATH)
#   OODA_PUSH        "true" (default) pushes the loop's commits; "false" not
#   OODA_PUSH_TOKEN  a token for the push over https (in a workflow,
#                    github.token); empty: git's own credentials
#   GITHUB_ACTIONS, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP: set by
#                    the runner; each is optional
#
# Exit status: ooda's own (CLI.md: 3 halted, 4 the skill failed, 2 the
# configuration), so the job fails exactly when the cycle did; else 1 when
# the push failed, else 0. The push is tried whatever the cycle's status:
# a cycle that halted or whose skill failed is still recorded and committed.
set -u

ooda=${OODA_BIN:-ooda}
push=${OODA_PUSH:-true}
# The token stays a shell variable: `ooda cycle` and every skill it starts
# never see it; only the git commands that talk to the remote get it.
token=${OODA_PUSH_TOKEN:-}
unset OODA_PUSH_TOKEN
export GIT_TERMINAL_PROMPT=0

# The loop's own commits all start so (docs/cycle.md, 6-D).
loop_subject='evolve: cycle #'

note() { printf 'ooda-action: %s\n' "$*" >&2; }

# annotate LEVEL TITLE MESSAGE: a workflow annotation on a runner, a plain
# line elsewhere. Messages here are fixed text plus numbers and codes that
# match [a-z_0-9]; nothing a repository controls reaches a workflow command.
annotate() {
  if [ -n "${GITHUB_ACTIONS:-}" ]; then
    printf '::%s title=%s::%s\n' "$1" "$2" "$3"
  else
    printf '%s: %s: %s\n' "$1" "$2" "$3" >&2
  fi
}

output() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
  fi
}

# remote_git ARGS: git for a command that talks to the remote. Hooks are off
# (a skill can write .git/hooks, and a pre-push hook would see the token),
# and the token, when there is one, reaches git only through this command's
# credential helper.
# shellcheck disable=SC2016 # the helper expands the variable, not this shell
helper='!f() { test "$1" = get || exit 0; echo username=x-access-token; echo "password=$OODA_ACTION_TOKEN"; }; f'
remote_git() {
  if [ -n "$token" ]; then
    OODA_ACTION_TOKEN=$token git -c core.hooksPath=/dev/null \
      -c credential.helper= -c "credential.helper=$helper" "$@"
  else
    git -c core.hooksPath=/dev/null "$@"
  fi
}

if ! git rev-parse --git-dir >/dev/null 2>&1; then
  annotate error "ooda" "$(pwd) is not a git repository: check the repository out first (actions/checkout)"
  exit 2
fi

branch=$(git symbolic-ref --quiet --short HEAD) || {
  # The engine commits nothing on a detached HEAD (docs/cycle.md, 6-D), so a
  # cycle here would be lost with the runner.
  annotate error "ooda" "HEAD is detached, so the cycle's state could not be committed: check out a branch (actions/checkout with ref: set to a branch name)"
  exit 2
}

# A git identity for the state commit, when the repository has none: the
# variables reach only this run, not the repository's configuration.
if [ -z "${GIT_AUTHOR_NAME:-}" ] && [ -z "$(git config user.name)" ]; then
  export GIT_AUTHOR_NAME='github-actions[bot]' GIT_COMMITTER_NAME='github-actions[bot]'
fi
if [ -z "${GIT_AUTHOR_EMAIL:-}" ] && [ -z "$(git config user.email)" ]; then
  export GIT_AUTHOR_EMAIL='41898282+github-actions[bot]@users.noreply.github.com'
  export GIT_COMMITTER_EMAIL='41898282+github-actions[bot]@users.noreply.github.com'
fi

# A fresh checkout may leave the branch without an upstream; the push below
# (and the engine's, with git.push on) goes to the upstream only.
if ! git rev-parse --quiet --verify "@{upstream}" >/dev/null 2>&1; then
  if git rev-parse --quiet --verify "refs/remotes/origin/$branch" >/dev/null 2>&1; then
    git branch --quiet --set-upstream-to="origin/$branch" "$branch"
  fi
fi

result=$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ooda-cycle-XXXXXX") || exit 1
# Off a runner nobody reads the result file afterwards.
[ -n "${GITHUB_OUTPUT:-}" ] || trap 'rm -f "$result"' EXIT
"$ooda" cycle --json >"$result"
rc=$?

# Go's indented JSON puts the top-level keys at two spaces: these fields are
# read without a JSON tool, so the script runs where jq is not installed.
field() { sed -n -E "s/^  \"$1\": \"?([a-z_0-9]+)\"?,?\$/\\1/p" "$result" | head -n 1; }
status=$(field status)
reason=$(field reason)
cycle=$(field cycle)
[ "$reason" = null ] && reason=
[ "$cycle" = null ] && cycle=

output exit-code "$rc"
output status "$status"
output reason "$reason"
output cycle "$cycle"
output result-file "$result"

case $rc in
0) ;;
2) annotate error "ooda: configuration" "ooda cycle exited 2: config.json is missing or invalid; the log above names the file, the field and why" ;;
3) annotate error "ooda: halted" "ooda cycle exited 3: the HALT file stops every cycle until a person removes it (ooda resume); the log above says why it was created" ;;
4) annotate error "ooda: skill failed" "ooda cycle exited 4: cycle ${cycle:-?} ran and was recorded, but its skill failed (non-zero exit, timeout, or it did not start); the log above shows its output" ;;
*) annotate error "ooda" "ooda cycle exited $rc: an internal error; the log above shows it" ;;
esac

# A HALT file a breaker created this cycle (a cost cap, failures in a row)
# must outlive the job, or the next run on a fresh checkout would not see
# it: `ooda init` ignores it in git for local runs, so it is added by force
# and committed as the loop's own commit. A person resumes by deleting it in
# a commit (docs/running.md).
if [ "$(field halt_created)" = true ]; then
  halt_file=$("$ooda" config get safety.halt_file 2>/dev/null | sed -n 's/^"\(.*\)"$/\1/p')
  [ -n "$halt_file" ] || halt_file=agent/safety/HALT
  if [ -f "$halt_file" ] && git --literal-pathspecs add -f -- "$halt_file" &&
    ! git --literal-pathspecs diff --cached --quiet -- "$halt_file"; then
    if git --literal-pathspecs -c core.hooksPath=/dev/null commit --quiet --no-verify \
      -m "${loop_subject}${cycle:-0} -- HALT file created" -- "$halt_file"; then
      note "committed the HALT file $halt_file, so the next run stops too"
    else
      annotate warning "ooda" "the HALT file could not be committed: the next run on a fresh checkout will not see it"
    fi
  fi
fi

if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -n "$cycle" ]; then
  {
    printf '### ooda cycle %s: %s%s\n\n```\n' "$cycle" "${status:-unknown}" "${reason:+ ($reason)}"
    "$ooda" status --share --plain 2>/dev/null
    printf '```\n'
  } >>"$GITHUB_STEP_SUMMARY"
fi

pushed=false
push_rc=0
if [ "$push" != true ]; then
  note "not pushed: the push input is $push"
elif ! upstream=$(git rev-parse --quiet --abbrev-ref --symbolic-full-name "@{upstream}" 2>/dev/null); then
  note "not pushed: branch $branch has no upstream"
else
  remote=$(git config "branch.$branch.remote")
  merge=$(git config "branch.$branch.merge")
  for attempt in 1 2 3; do
    ahead=$(git rev-list --count "@{upstream}..HEAD")
    if [ "$ahead" = 0 ]; then
      note "nothing to push: $upstream has every commit of $branch"
      break
    fi
    # Only the loop's own commits are pushed for it, as the engine does:
    # anything else on the branch is someone's work to push themselves.
    foreign=$(git log --format=%s "@{upstream}..HEAD" | grep -cv "^$loop_subject")
    if [ "$foreign" != 0 ]; then
      annotate error "ooda: not pushed" "branch $branch has $foreign commit(s) that are not the loop's own, and only the loop's state commits are pushed for you"
      push_rc=1
      break
    fi
    head=$(git rev-parse HEAD)
    if remote_git push --no-verify --quiet "$remote" "$head:$merge"; then
      git update-ref "refs/remotes/$upstream" "$head" 2>/dev/null || true
      note "pushed $ahead commit(s) (up to $(git rev-parse --short HEAD)) to $upstream"
      pushed=true
      break
    fi
    # The remote moved on (a person pushed while the cycle ran): put the
    # loop's commits on top of it and try again. State files are the loop's
    # own, so a conflict means someone edited them; that is left to a person.
    if [ "$attempt" = 3 ]; then
      annotate error "ooda: not pushed" "the push to $upstream failed 3 times; the log above shows why, and the state commit goes with this runner"
      push_rc=1
      break
    fi
    note "push to $upstream rejected; fetching and rebasing the loop's commits onto it"
    if ! remote_git fetch --quiet "$remote" "+$merge:refs/remotes/$upstream"; then
      annotate error "ooda: not pushed" "could not fetch $upstream after the push was rejected"
      push_rc=1
      break
    fi
    if ! git -c core.hooksPath=/dev/null rebase --quiet "$upstream" >&2; then
      git rebase --abort >/dev/null 2>&1
      annotate error "ooda: not pushed" "the loop's commits could not be rebased onto $upstream (the log above shows why: someone changed the same state files, or the working tree has changes)"
      push_rc=1
      break
    fi
  done
fi
output pushed "$pushed"

if [ "$rc" != 0 ]; then
  exit "$rc"
fi
exit "$push_rc"
