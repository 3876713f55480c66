// Package deploy holds the files that run ooda where users run things —
// Kubernetes manifests, systemd units, a crontab line and a GitHub Actions
// workflow — next to the tests that check them, the repository root's
// Dockerfile and action.yml, and the action's scripts under scripts/action.
// docs/running.md shows each file and how to use it. It has no Go API.
package deploy
