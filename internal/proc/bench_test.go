package proc

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"testing"
)

// The cost of starting a process through Run, against a plain exec.Cmd:
// ooda starts a few git processes (Light) and one skill per cycle.
//
//	go test -run '^$' -bench . -benchtime 200x ./internal/proc/

// BenchmarkPlainExecCmd is the floor: os/exec with stdout and stderr kept
// apart, as a Light run of git keeps them.
func BenchmarkPlainExecCmd(b *testing.B) {
	for b.Loop() {
		var out, errb bytes.Buffer
		cmd := exec.Command("/bin/true")
		cmd.Env = testEnv
		cmd.Stdout, cmd.Stderr = struct{ io.Writer }{&out}, struct{ io.Writer }{&errb}
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRunLight(b *testing.B) {
	for b.Loop() {
		var out, errb bytes.Buffer
		res := Exec{}.Run(context.Background(), Spec{Argv: []string{"/bin/true"}, Env: testEnv, Output: &out, Stderr: &errb, Light: true})
		if !res.OK() {
			b.Fatal(res)
		}
	}
}

func BenchmarkRunContained(b *testing.B) {
	for b.Loop() {
		var out bytes.Buffer
		res := Exec{}.Run(context.Background(), Spec{Argv: []string{"/bin/true"}, Env: testEnv, Output: &out, HaltFile: "/nonexistent/HALT"})
		if !res.OK() {
			b.Fatal(res)
		}
	}
}

func BenchmarkRunContainedNoCgroup(b *testing.B) {
	for b.Loop() {
		var out bytes.Buffer
		res := Exec{noCgroup: true}.Run(context.Background(), Spec{Argv: []string{"/bin/true"}, Env: testEnv, Output: &out, HaltFile: "/nonexistent/HALT"})
		if !res.OK() {
			b.Fatal(res)
		}
	}
}
