package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A binary built before internal/perfstat existed writes no OODA_STATS
// file. Its counters are then read from the system calls themselves, with
// strace following every thread and child (-ff: one file per task; -y:
// file descriptors printed with their paths). The rules match what
// perfstat counts, so the two sources agree on a binary that has both:
//
//   - a durable write is a successful rename by one of ooda's own threads
//     (every state write is temp file + fsync + rename + directory fsync);
//   - a file or directory fsync is an fsync/fdatasync by those threads,
//     told apart by whether the path is a directory after the run;
//   - an append is an fsync of a file those threads opened with O_APPEND;
//   - a process is a clone without CLONE_THREAD whose child then executed
//     a program (the Go runtime's own probe child never does).
//
// Children of children (a hook git runs) are not ooda's processes and are
// not counted, exactly as perfstat does not see them.

var (
	straceResult = regexp.MustCompile(`\)\s+=\s+(-?\d+)(?:<([^>]*)>)?`)
	straceFDPath = regexp.MustCompile(`^\w+\(\d+<([^>]*)>`)
)

// straceCounts counts ooda's operations in the per-task files of one
// strace -ff run. tasks maps a task id to its file's text; bin is the
// program strace started; isDir says whether a path names a directory.
func straceCounts(tasks map[int]string, bin string, isDir func(string) bool) (Counts, error) {
	main := -1
	for pid, text := range tasks {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "execve(\""+bin+"\"") && strings.HasSuffix(strings.TrimSpace(line), "= 0") {
				main = pid
			}
		}
	}
	if main < 0 {
		return Counts{}, fmt.Errorf("strace: no task executed %s", bin)
	}
	execed := func(pid int) bool {
		for _, line := range strings.Split(tasks[pid], "\n") {
			if strings.HasPrefix(line, "execve(") && strings.HasSuffix(strings.TrimSpace(line), "= 0") {
				return true
			}
		}
		return false
	}
	own := map[int]bool{main: true}
	queue := []int{main}
	var c Counts
	appendPaths := map[string]bool{}
	type fsyncCall struct{ path string }
	var fsyncs []fsyncCall
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, line := range strings.Split(tasks[pid], "\n") {
			line = strings.TrimSpace(line)
			call, _, ok := strings.Cut(line, "(")
			if !ok {
				continue
			}
			m := straceResult.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			ret, _ := strconv.Atoi(m[1])
			if ret < 0 {
				continue
			}
			switch call {
			case "clone", "clone3", "fork", "vfork":
				if ret == 0 {
					continue
				}
				if strings.Contains(line, "CLONE_THREAD") {
					if !own[ret] {
						own[ret] = true
						queue = append(queue, ret)
					}
				} else if execed(ret) {
					c.Processes++
				}
			case "rename", "renameat", "renameat2":
				c.DurableWrites++
			case "open", "openat", "openat2":
				if strings.Contains(line, "O_APPEND") && m[2] != "" {
					appendPaths[m[2]] = true
				}
			case "fsync", "fdatasync":
				p := straceFDPath.FindStringSubmatch(line)
				if p == nil {
					return Counts{}, fmt.Errorf("strace: task %d: no path in %q (run strace with -y)", pid, line)
				}
				fsyncs = append(fsyncs, fsyncCall{p[1]})
			}
		}
	}
	// Appends are known only once every task's opens have been read.
	for _, f := range fsyncs {
		switch {
		case isDir(f.path):
			c.DirSyncs++
		case appendPaths[f.path]:
			c.Appends++
			c.FileSyncs++
		default:
			c.FileSyncs++
		}
	}
	return c, nil
}

// straceCycle runs cmd under strace and counts what the ooda process did.
func straceCycle(ctx context.Context, strace, bin string, args, env []string, work string) (Counts, error) {
	dir, err := os.MkdirTemp(work, "strace-")
	if err != nil {
		return Counts{}, err
	}
	defer os.RemoveAll(dir)
	prefix := filepath.Join(dir, "t")
	full := append([]string{"-ff", "-y", "-o", prefix,
		"-e", "trace=fsync,fdatasync,rename,renameat,renameat2,clone,clone3,fork,vfork,execve,open,openat,openat2",
		bin}, args...)
	cmd := exec.CommandContext(ctx, strace, full...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return Counts{}, fmt.Errorf("strace %s %s: %v\n%s", bin, strings.Join(args, " "), err, tail(out.Bytes()))
	}
	names, err := filepath.Glob(prefix + ".*")
	if err != nil {
		return Counts{}, err
	}
	sort.Strings(names)
	tasks := map[int]string{}
	for _, n := range names {
		pid, err := strconv.Atoi(strings.TrimPrefix(n, prefix+"."))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(n)
		if err != nil {
			return Counts{}, err
		}
		tasks[pid] = string(b)
	}
	return straceCounts(tasks, bin, func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.IsDir()
	})
}
