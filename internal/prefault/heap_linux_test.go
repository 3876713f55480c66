//go:build linux

package prefault

import (
	"bytes"
	"os"
	"os/exec"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
)

// heapChildEnv runs TestHeapAheadChild in a process of its own, in the
// mode it names: HeapAhead acts once per process.
const heapChildEnv = "PREFAULT_HEAP_CHILD"

// HeapAhead grows the heap by its block in huge pages and frees the block
// for the allocations that follow, once; not with OODA_PREFAULT=0, not for
// less than HeapAheadMin.
func TestHeapAhead(t *testing.T) {
	var buf [64]byte
	if !hugePagesAdvisable(readSmall(thpEnabledFile, buf[:])) {
		t.Skipf("%s gives no huge pages to advised memory", thpEnabledFile)
	}
	for _, mode := range []string{"on", "off", "small"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHeapAheadChild$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), heapChildEnv+"="+mode, EnvVar+"=1")
			if mode == "off" {
				cmd.Env = append(cmd.Env, EnvVar+"=0")
			}
			out, err := cmd.CombinedOutput()
			if bytes.Contains(out, []byte("--- SKIP")) {
				t.Skipf("%s", out)
			}
			if err != nil || !bytes.Contains(out, []byte("--- PASS: TestHeapAheadChild")) {
				t.Fatalf("child: %v\n%s", err, out)
			}
		})
	}
}

// TestHeapAheadChild is TestHeapAhead's child process.
func TestHeapAheadChild(t *testing.T) {
	mode := os.Getenv(heapChildEnv)
	if mode == "" {
		t.Skip("run by TestHeapAhead in a process of its own")
	}
	const n = 16 << 20
	free0, huge0, fallback0 := heapFreeBytes(), anonHugeKiB(t), vmstat(t, "thp_fault_fallback")
	switch mode {
	case "on":
		HeapAhead(n)
	case "off":
		HeapAhead(n) // OODA_PREFAULT=0
	case "small":
		HeapAhead(HeapAheadMin - 1)
	}
	freed := int64(heapFreeBytes()) - int64(free0)
	hugeGained := anonHugeKiB(t) - huge0
	if mode != "on" {
		if freed >= n/2 || hugeGained >= 2048 {
			t.Fatalf("%s: %d bytes freed, %d KiB of huge pages gained: it acted", mode, freed, hugeGained)
		}
		return
	}
	if freed < n/2 {
		t.Errorf("%d bytes of heap free after, want at least %d: the block was not collected for reuse", freed, n/2)
	}
	if hugeGained < 2048 {
		if vmstat(t, "thp_fault_fallback") > fallback0 {
			t.Skipf("the kernel found no free huge page (thp_fault_fallback rose)")
		}
		t.Errorf("%d KiB of huge pages gained, want at least 2048", hugeGained)
	}
	// A second call, the next cycle of the same process, would reuse the
	// same memory: that it did nothing shows in the collections counted.
	gcs := runtimeMetric("/gc/cycles/total:gc-cycles")
	HeapAhead(n)
	if again := runtimeMetric("/gc/cycles/total:gc-cycles") - gcs; again != 0 {
		t.Errorf("a second call collected garbage %d times: it acted twice", again)
	}
}

// heapFreeBytes is the heap memory the runtime holds free and mapped.
func heapFreeBytes() uint64 { return runtimeMetric("/memory/classes/heap/free:bytes") }

// runtimeMetric reads one of the runtime's uint64 metrics.
func runtimeMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// anonHugeKiB is this process's anonymous memory in huge pages.
func anonHugeKiB(t *testing.T) int {
	t.Helper()
	return fieldOf(t, "/proc/self/smaps_rollup", "AnonHugePages:")
}

// vmstat is one counter of /proc/vmstat.
func vmstat(t *testing.T, name string) int {
	t.Helper()
	return fieldOf(t, "/proc/vmstat", name+" ")
}

// fieldOf is the number after prefix on its line of file.
func fieldOf(t *testing.T, file, prefix string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Skipf("%v", err)
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("%s: %q: %v", file, l, err)
			}
			return n
		}
	}
	t.Skipf("%s has no %q", file, prefix)
	return 0
}
