package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestAtomicWrite_ReplacesContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	if err := WriteFileAtomic(p, []byte(`{"cycle_count": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(p, []byte(`{"cycle_count": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, p); got != `{"cycle_count": 2}` {
		t.Fatalf("content = %q", got)
	}
}

func TestAtomicWrite_CreatesMissingDirectories(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent", "state", "evolve", "state.json")
	if err := WriteFileAtomic(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, p); got != "{}" {
		t.Fatalf("content = %q", got)
	}
}

func TestAtomicWrite_NoTempFilesLeftBehind(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "metrics.json")
	for i := 0; i < 20; i++ {
		if err := WriteFileAtomic(p, []byte(fmt.Sprintf(`{"n": %d}`, i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if names := dirNames(t, dir); len(names) != 1 || names[0] != "metrics.json" {
		t.Fatalf("directory holds %v, want only metrics.json", names)
	}
}

// As root no permission bit stops a write, so the failure is provoked with
// a parent path that is a regular file.
func TestAtomicWrite_FailureLeavesOldContentIntact(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "evolve")
	writeFile(t, blocker, "old content")
	err := WriteFileAtomic(filepath.Join(blocker, "state.json"), []byte("new"), 0o644)
	if err == nil {
		t.Fatal("write under a regular file succeeded")
	}
	if got := readString(t, blocker); got != "old content" {
		t.Fatalf("old content became %q", got)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Fatalf("directory holds %v after the failed write", names)
	}
}

// A write that fails half-way (here: the file size limit is hit while the
// temporary file is written) must leave the target exactly as it was and
// remove its temporary file. The limit is process-wide, hence the child.
func TestAtomicWrite_FailureMidWriteLeavesOldContentIntact(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	old := `{"cycle_count": 152}`
	writeFile(t, p, old)
	cmd := helperCommand(t, "write-fsize", "OODA_WRITE_PATH="+p)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "FAILED:") {
		t.Fatalf("helper output %q, want a failed write", out)
	}
	if got := readString(t, p); got != old {
		t.Fatalf("old content became %q", got)
	}
	if names := dirNames(t, dir); len(names) != 1 || names[0] != "state.json" {
		t.Fatalf("directory holds %v after the failed write", names)
	}
}

func writeFsizeHelper() int {
	p := os.Getenv("OODA_WRITE_PATH")
	signal.Ignore(syscall.SIGXFSZ)
	lim := syscall.Rlimit{Cur: 64 << 10, Max: 64 << 10}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Println("SETUP:", err)
		return 2
	}
	err := WriteFileAtomic(p, bytes.Repeat([]byte("x"), 1<<20), 0o644)
	if err == nil {
		fmt.Println("UNEXPECTED SUCCESS")
		return 3
	}
	fmt.Println("FAILED:", err)
	return 0
}

func TestAtomicWrite_PermApplied(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cost_ledger.json")
	for _, perm := range []os.FileMode{0o600, 0o644, 0o640} {
		if err := WriteFileAtomic(p, []byte("{}"), perm); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != perm {
			t.Fatalf("mode = %v, want %v", st.Mode().Perm(), perm)
		}
	}
}

// bigDoc is a valid JSON document of roughly 200 KB whose every byte
// depends on tag, so a torn read mixing two versions cannot stay valid
// by accident at the seams.
func bigDoc(tag string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"tag":"` + tag + `","decision_log":[`)
	for i := 0; b.Len() < 200<<10; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"cycle":%d,"selected_domain":"%s-%06d","orient_summary":"%s"}`, i, tag, i, strings.Repeat(tag, 8))
	}
	b.WriteString("]}")
	return b.Bytes()
}

func TestAtomicWrite_ConcurrentReadersNeverSeeTornFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	docs := [][]byte{bigDoc("alpha"), bigDoc("omega-longer-variant")}
	if len(docs[0]) == len(docs[1]) {
		t.Fatal("documents of equal length would hide truncation")
	}
	if err := WriteFileAtomic(p, docs[0], 0o644); err != nil {
		t.Fatal(err)
	}

	var done atomic.Bool
	var reads, bad atomic.Int64
	var firstBad atomic.Value
	var wg sync.WaitGroup
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				b, err := os.ReadFile(p)
				reads.Add(1)
				var why string
				switch {
				case err != nil:
					why = "read error: " + err.Error()
				case !json.Valid(b):
					why = fmt.Sprintf("invalid JSON of %d bytes", len(b))
				case !bytes.Equal(b, docs[0]) && !bytes.Equal(b, docs[1]):
					why = "a document that was never written"
				}
				if why != "" {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, why)
				}
			}
		}()
	}
	for i := 0; i < 500; i++ {
		if err := WriteFileAtomic(p, docs[i%2], 0o644); err != nil {
			done.Store(true)
			wg.Wait()
			t.Fatal(err)
		}
	}
	done.Store(true)
	wg.Wait()
	if n := bad.Load(); n > 0 {
		t.Fatalf("%d of %d reads saw a torn file; first: %v", n, reads.Load(), firstBad.Load())
	}
	if reads.Load() < 10 {
		t.Fatalf("only %d reads happened; the test proved nothing", reads.Load())
	}
}

func TestAppendLine_AppendsNewlineTerminatedLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "evolve", "cycle_log.jsonl")
	lines := []string{`{"cycle_id":1}`, `{"cycle_id":2}`, `{"cycle_id":3}`}
	for _, l := range lines {
		if err := AppendLine(p, []byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	want := strings.Join(lines, "\n") + "\n"
	if got := readString(t, p); got != want {
		t.Fatalf("log = %q, want %q", got, want)
	}
}

func TestAppendLine_NeverRewritesExistingContent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cycle_log.jsonl")
	history := `{"cycle_id":1,"note":"written by the original project"}` + "\n"
	writeFile(t, p, history)
	if err := AppendLine(p, []byte(`{"cycle_id":2}`)); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, p); got != history+`{"cycle_id":2}`+"\n" {
		t.Fatalf("log = %q", got)
	}
}

func TestAppendLine_ConcurrentAppendersKeepLinesIntact(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cycle_log.jsonl")
	const writers, perWriter = 20, 50
	// Lines long enough that an interleaved write would be obvious.
	pad := strings.Repeat("p", 300)
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				line, _ := json.Marshal(map[string]any{"writer": w, "seq": i, "pad": pad})
				if err := AppendLine(p, line); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[[2]int]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		var rec struct {
			Writer int    `json:"writer"`
			Seq    int    `json:"seq"`
			Pad    string `json:"pad"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Pad != pad {
			t.Fatalf("line %d is not intact: %q", n, sc.Text())
		}
		key := [2]int{rec.Writer, rec.Seq}
		if seen[key] {
			t.Fatalf("line %v appears twice", key)
		}
		seen[key] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != writers*perWriter || len(seen) != writers*perWriter {
		t.Fatalf("%d lines (%d distinct), want %d", n, len(seen), writers*perWriter)
	}
	if b := readString(t, p); !strings.HasSuffix(b, "\n") {
		t.Fatal("log does not end with a newline")
	}
}

func TestAppendLine_FailsUnderRegularFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "evolve"), "x")
	err := AppendLine(filepath.Join(dir, "evolve", "cycle_log.jsonl"), []byte("{}"))
	if err == nil {
		t.Fatal("append under a regular file succeeded")
	}
	if got := readString(t, filepath.Join(dir, "evolve")); got != "x" {
		t.Fatalf("the blocking file became %q", got)
	}
}
