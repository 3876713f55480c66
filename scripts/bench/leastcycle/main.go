// Command leastcycle is the least an `ooda cycle` process can cost on this
// machine, figure k of the benchmark (scripts/bench, docs/benchmarks.md):
// a program linked from the same packages as ooda, so that it starts and
// exits as ooda does, which does only the input and output a cycle cannot
// do without, and nothing else:
//
//   - takes the lock (a file created exclusively, not synced, as ooda's);
//   - reads config.json and the evolve state files;
//   - marks the cycle in progress (state.json, durably);
//   - starts the skill (`true`, in a process group of its own) and waits;
//   - writes the cycle's other whole files side by side, each durably,
//     then syncs their directory once;
//   - appends to the cycle log and syncs it;
//   - writes state.json durably last, and removes the lock.
//
// It decodes nothing, decides nothing and contains the skill in nothing
// more than a process group, so a real cycle can only cost more. The
// number of whole files and of appends are arguments: the benchmark passes
// what a cycle of the measured binary made durable, so that both are
// compared with the same durable-write floor.
//
//	leastcycle --writes N --appends M PROJECT
//
// Given --ooda first, it is ooda itself (the rest of its arguments are
// ooda's): that is what keeps every package of ooda linked in (ooda.go).
// Built with -tags bare it links none of ooda's packages, and starts as a
// small Go program does: the least any cycle process can cost here,
// whatever it is linked from (figure m), against the least one with
// ooda's packages costs (figure k).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// prefix names the files leastcycle writes beside ooda's, so that it reads
// back only ooda's.
const prefix = "leastcycle-"

// oodaMain is ooda's own entry point (cli.Main), set by ooda.go; nil in a
// bare build.
var oodaMain func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--ooda" {
		if oodaMain == nil {
			fmt.Fprintln(os.Stderr, "leastcycle: --ooda: this build is bare (-tags bare): ooda is not linked in")
			os.Exit(2)
		}
		os.Exit(oodaMain(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "leastcycle:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fl := flag.NewFlagSet("leastcycle", flag.ContinueOnError)
	writes := fl.Int("writes", 11, "whole files made durable, state.json twice among them")
	appends := fl.Int("appends", 1, "synced appends to the cycle log")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() != 1 {
		return errors.New("usage: leastcycle --writes N --appends M PROJECT")
	}
	if *writes < 2 || *appends < 0 {
		return fmt.Errorf("--writes %d --appends %d: at least 2 writes (state.json at the start and at the end), no negative appends", *writes, *appends)
	}
	root := fl.Arg(0)
	evolve := filepath.Join(root, "agent", "state", "evolve")
	lock := filepath.Join(evolve, prefix+"lock")
	lf, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(lf, `{"pid":%d}`, os.Getpid())
	if cerr := lf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	defer os.Remove(lock)

	if _, err := os.ReadFile(filepath.Join(root, "config.json")); err != nil {
		return err
	}
	ents, err := os.ReadDir(evolve)
	if err != nil {
		return err
	}
	var docs [][]byte
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(evolve, e.Name()))
		if err != nil {
			return err
		}
		docs = append(docs, b)
	}
	st, err := os.ReadFile(filepath.Join(evolve, "state.json"))
	if err != nil {
		return err
	}

	// The cycle in progress, durable before the skill starts.
	if err := durable(evolve, "state.json", st); err != nil {
		return err
	}
	if err := syncDir(evolve); err != nil {
		return err
	}

	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the skill (true): %w", err)
	}

	// The record: every whole file but the two state.json writes, side
	// by side, then their directory once.
	errs := make([]error, *writes-2)
	var wg sync.WaitGroup
	for i := range errs {
		data := st
		if len(docs) > 0 {
			data = docs[i%len(docs)]
		}
		wg.Go(func() { errs[i] = durable(evolve, fmt.Sprintf("%s%d.json", prefix, i), data) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := syncDir(evolve); err != nil {
		return err
	}
	for range *appends {
		if err := appendSynced(filepath.Join(evolve, prefix+"log.jsonl"), []byte("{}\n")); err != nil {
			return err
		}
	}
	// The commit point, last.
	if err := durable(evolve, "state.json", st); err != nil {
		return err
	}
	return syncDir(evolve)
}

// durable writes data to dir/name as the state store does: a new temporary
// file, written, synced, closed and renamed over the name.
func durable(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, "."+name+".tmp")
	err := writeSynced(tmp, os.O_CREATE|os.O_EXCL, data)
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// appendSynced appends data to the file at path and syncs it.
func appendSynced(path string, data []byte) error {
	return writeSynced(path, os.O_CREATE|os.O_APPEND, data)
}

// writeSynced opens path for writing with flag added, writes data, syncs
// and closes it.
func writeSynced(path string, flag int, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|flag, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir syncs the directory dir, which makes the renames in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
