package cli

import (
	"errors"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/engine"
)

// Exit codes (CLI.md).
const (
	ExitOK       = 0
	ExitInternal = 1
	ExitUsage    = 2
	ExitHalted   = 3
	// ExitSkillFailed: the cycle was recorded, but its skill failed (a
	// non-zero exit, a timeout, no start); engine.Result.ExitCode says when.
	ExitSkillFailed = engine.ExitSkillFailed
)

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError marks a command-line mistake (exit 2).
func usageError(err error) error { return &exitError{code: ExitUsage, err: err} }

// withCode returns an error that makes the process exit with code; a nil
// err means the message has already been printed.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// exitCode is the single mapping from an error to the process exit code.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if config.IsConfigError(err) {
		return ExitUsage
	}
	var pe *engine.ProjectError
	if errors.As(err, &pe) {
		return ExitUsage
	}
	return ExitInternal
}
