// Package judge delegates the engine's judgments that need language to an
// optional, user-supplied judge command.
//
// The engine makes five kinds of judgment: the one-sentence world-model
// summary of Orient ("orient_summary"), the self-critique lesson of Reflect
// ("critique"), the artifact critic's scores ("artifact_critic"), the
// goal-conformance verdict ("goal_verdict") and a natural-language session
// completion condition ("completion"). Each one has a deterministic default
// computed from facts, so the engine never needs a judge; a judge only
// replaces the default with a better answer when it gives a valid one.
//
// # Configuration
//
// config.json:
//
//	"judge": {"command": ["./tools/judge.sh", "--model", "small"], "timeout": "90s"}
//
// command is an argv, never a shell string; a relative path containing a
// slash is taken relative to the project root, a bare name is looked up in
// PATH. timeout is a Go duration ("45s", "2m"), default 60s. Without a
// command every judgment is its default.
//
// # Protocol
//
// The engine starts the command once per judgment, in the project root,
// with the engine's environment minus the credentials ooda uses (the forge
// tokens, the variables the notifications reference) unless judge's
// env_passthrough names them or inherit_env is true, and writes one JSON
// document to its standard input, then closes it:
//
//	{
//	  "version": 1,
//	  "kind": "goal_verdict",
//	  "prompt": "Did cycle 12 achieve its declared goal? ...",
//	  "facts": {"cycle": 12, "goal": "...", "result_type": "pr_merged"},
//	  "default": {"achieved": true, "reason": "PR merged", "confidence": 0.6}
//	}
//
// The fields:
//
//   - version is 1; it changes only if the protocol does.
//   - kind is one of the five kinds above. A judge should treat a kind it
//     does not know as a reason to answer with the default (or an error).
//   - prompt is the question in English, ready to hand to a language model.
//   - facts is an object of everything the question is about (never
//     null; {} when there are none).
//   - default is the answer the engine uses without a judge. It is also
//     the schema of the answer: the answer must be of the same JSON type
//     (an object when default is an object, a string when it is a string,
//     and so on; any type when default is null), and an object answer
//     should have the default's keys with values of the same types. The
//     engine checks the type only. A judge that prints
//     {"answer": <the default>} changes nothing.
//
// The command must print exactly one JSON object on standard output and
// exit 0:
//
//	{"answer": <any JSON value of the default's type>}
//
// or, to decline:
//
//	{"error": "why there is no answer"}
//
// Whitespace around the document is allowed; nothing else is. Standard
// error is read together with standard output (the engine keeps the two in
// one stream), so a judge must not write diagnostics to either: send them
// to a file. Other keys of the object are ignored.
//
// Any of the following makes the engine use the default and record why
// (Response.Error): the command cannot be started; it exits non-zero; it
// runs past the timeout (its whole process group is then stopped: SIGTERM,
// then SIGKILL); the HALT file appears; the engine is interrupted; its
// output exceeds 1 MiB (it is stopped at once); the output is not exactly
// one JSON object; "error" is present and not null (it wins over
// "answer"); "answer" is missing or null; the answer's JSON type differs
// from the default's. A judge is therefore free to fail: the worst it can
// do is be ignored.
//
// A minimal judge that always agrees with the default:
//
//	#!/bin/sh
//	exec jq -c '{answer: .default}'
package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/secret"
)

// The kinds of judgment.
const (
	KindOrientSummary  = "orient_summary"
	KindCritique       = "critique"
	KindArtifactCritic = "artifact_critic"
	KindGoalVerdict    = "goal_verdict"
	KindCompletion     = "completion"
)

// Where a Response's answer came from.
const (
	SourceJudge   = "judge"
	SourceDefault = "default"
)

const (
	// ProtocolVersion is the "version" of every request.
	ProtocolVersion = 1
	// DefaultTimeout applies when config.judge.timeout is empty.
	DefaultTimeout = 60 * time.Second
	// MaxOutput is the most output a judge may print.
	MaxOutput = 1 << 20
	// killGrace is the time a stopped judge gets between SIGTERM and
	// SIGKILL. A judge holds no state worth a long cleanup, and the cycle
	// waits on it.
	killGrace = 2 * time.Second
	// excerpt is how much of a judge's output or error is quoted in
	// Response.Error: enough to recognise the problem, not to flood a log.
	excerpt = 200
)

// Request is one judgment.
type Request struct {
	// Kind is one of the Kind constants.
	Kind string
	// Prompt is the question in English.
	Prompt string
	// Facts is what the question is about; nil is sent as {}.
	Facts map[string]any
	// Default is the deterministic answer, used whenever the judge does not
	// give a valid one. It must encode as JSON.
	Default any
}

// Response is the answer to a Request.
type Response struct {
	// Answer is the judge's answer, or the Default encoded as JSON.
	Answer json.RawMessage
	// Source is SourceJudge or SourceDefault.
	Source string
	// Error says why a configured judge's answer was not used; empty when
	// the judge answered or when none is configured.
	Error string
}

// Judge runs the configured judge command. A nil *Judge, like one without a
// command, answers every request with its default.
type Judge struct {
	// HaltFile, when set, stops a running judge as soon as this file
	// exists (the engine's HALT file).
	HaltFile string
	// Env is the judge's complete environment; nil means the engine's own
	// without ooda's credentials (secret.ChildEnv with the configured
	// policy), read at each Ask, since a judge wrapping a language-model
	// client needs its keys and PATH but not the forge token.
	Env []string

	policy  config.EnvPolicy
	argv    []string
	timeout time.Duration
	dir     string
	runner  proc.Runner
}

// New returns the Judge configured by cfg, running in projectDir through
// runner (nil means proc.Exec). An invalid configuration (an empty argv[0],
// a timeout that is not a positive Go duration) is returned as an error
// together with a usable Judge: without a command for an invalid argv, with
// DefaultTimeout for an invalid timeout, so a caller may warn and go on.
func New(cfg config.Judge, projectDir string, runner proc.Runner) (*Judge, error) {
	if runner == nil {
		runner = proc.Exec{}
	}
	j := &Judge{timeout: DefaultTimeout, dir: projectDir, runner: runner, policy: cfg.EnvPolicy}
	var errs []error
	if len(cfg.Command) > 0 {
		if strings.TrimSpace(cfg.Command[0]) == "" {
			errs = append(errs, errors.New("judge.command: the program (first element) is empty; judgments use their defaults"))
		} else {
			j.argv = append([]string(nil), cfg.Command...)
		}
	}
	if cfg.Timeout != "" {
		d, err := time.ParseDuration(cfg.Timeout)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("judge.timeout: %q is not a positive Go duration (e.g. \"90s\"); using %s", cfg.Timeout, DefaultTimeout))
		} else {
			j.timeout = d
		}
	}
	return j, errors.Join(errs...)
}

// Enabled reports whether a judge command is configured.
func (j *Judge) Enabled() bool { return j != nil && len(j.argv) > 0 }

// Timeout is how long one judgment may take.
func (j *Judge) Timeout() time.Duration {
	if j == nil {
		return DefaultTimeout
	}
	return j.timeout
}

// wireRequest is the document written to the judge's stdin.
type wireRequest struct {
	Version int             `json:"version"`
	Kind    string          `json:"kind"`
	Prompt  string          `json:"prompt"`
	Facts   map[string]any  `json:"facts"`
	Default json.RawMessage `json:"default"`
}

// Ask answers req: with the judge's answer when a judge is configured and
// gives a valid one, otherwise with req.Default. It never fails; the reason
// a judge was not used is in Response.Error.
func (j *Judge) Ask(ctx context.Context, req Request) Response {
	def, err := json.Marshal(req.Default)
	if err != nil {
		// A programming error of the caller; the judge could not be told
		// the default, so it is not asked either.
		return Response{Answer: json.RawMessage("null"), Source: SourceDefault,
			Error: fmt.Sprintf("the default answer cannot be encoded: %v", err)}
	}
	fallback := func(format string, args ...any) Response {
		// The error quotes the judge's output, which may echo a token.
		return Response{Answer: def, Source: SourceDefault, Error: secret.Redact(fmt.Sprintf(format, args...))}
	}
	if !j.Enabled() {
		return Response{Answer: def, Source: SourceDefault}
	}
	facts := req.Facts
	if facts == nil {
		facts = map[string]any{}
	}
	stdin, err := json.Marshal(wireRequest{Version: ProtocolVersion, Kind: req.Kind, Prompt: req.Prompt, Facts: facts, Default: def})
	if err != nil {
		return fallback("the request cannot be encoded: %v", err)
	}
	stdin = append(stdin, '\n')

	env := j.Env
	if env == nil {
		env = secret.ChildEnv(os.Environ(), j.policy.EnvPassthrough, j.policy.InheritEnv)
	}
	// A judge that floods its output is stopped at once rather than at the
	// timeout.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := &limitedBuffer{limit: MaxOutput, overflow: cancel}
	res := j.runner.Run(rctx, proc.Spec{
		Argv: j.argv, Dir: j.dir, Env: env, Timeout: j.timeout,
		Stdin: stdin, Output: out, HaltFile: j.HaltFile, KillGrace: killGrace,
	})
	name := j.argv[0]
	switch {
	case res.StartErr != nil:
		return fallback("judge %s cannot be started: %v", name, res.StartErr)
	case out.exceeded():
		return fallback("judge %s printed more than %d bytes", name, MaxOutput)
	case res.TimedOut:
		return fallback("judge %s did not answer within %s", name, j.timeout)
	case res.Halted:
		return fallback("judge %s stopped: HALT file appeared", name)
	case res.Canceled:
		return fallback("judge %s stopped: interrupted", name)
	case res.ExitCode != 0:
		return fallback("judge %s exited with status %d%s", name, res.ExitCode, quoteOutput(out.bytes()))
	}
	// An answer becomes state (a summary, a lesson); a token a judge with
	// the credential echoes must not. Masking keeps the JSON valid: a
	// value is also registered in its JSON-escaped form.
	answer, reason := parse(secret.RedactBytes(out.bytes()), def)
	if reason != "" {
		return fallback("judge %s: %s", name, reason)
	}
	return Response{Answer: answer, Source: SourceJudge}
}

// parse reads the judge's output and checks the answer against the
// default's type. reason is empty when answer is to be used.
func parse(output, def []byte) (answer json.RawMessage, reason string) {
	dec := json.NewDecoder(bytes.NewReader(output))
	var doc map[string]json.RawMessage
	if err := dec.Decode(&doc); err != nil || doc == nil {
		if len(bytes.TrimSpace(output)) == 0 {
			return nil, "printed nothing; expected {\"answer\": ...}"
		}
		return nil, "output is not a JSON object" + quoteOutput(output)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, "output has more than the one JSON object (stderr is read with stdout)" + quoteOutput(output)
	}
	if e, ok := doc["error"]; ok && !isNull(e) {
		var msg string
		if json.Unmarshal(e, &msg) != nil {
			msg = string(e)
		}
		return nil, "declined: " + clip(msg)
	}
	a, ok := doc["answer"]
	if !ok || isNull(a) {
		return nil, "no \"answer\" in its output"
	}
	if dt, at := config.JSONKind(def), config.JSONKind(a); dt != "null" && dt != at {
		return nil, fmt.Sprintf("answer is %s, the default is %s", article(at), article(dt))
	}
	return a, ""
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func article(typ string) string {
	if typ == "object" || typ == "array" {
		return "an " + typ
	}
	return "a " + typ
}

// quoteOutput renders the start of a judge's output for an error message.
func quoteOutput(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	return fmt.Sprintf(": %q", clip(s))
}

func clip(s string) string {
	if len(s) <= excerpt {
		return s
	}
	// Back off to a character boundary so the excerpt stays valid UTF-8.
	i := excerpt
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// limitedBuffer keeps at most limit bytes and calls overflow once when more
// arrive. It never fails a write: the process runner would only discard the
// rest, and the judge is being stopped anyway.
type limitedBuffer struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	limit    int
	over     bool
	overflow func()
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over {
		return len(p), nil
	}
	if b.buf.Len()+len(p) > b.limit {
		b.over = true
		b.overflow()
		return len(p), nil
	}
	b.buf.Write(p)
	return len(p), nil
}

func (b *limitedBuffer) exceeded() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.over
}

func (b *limitedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Bytes()
}
