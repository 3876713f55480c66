//go:build linux

package prefault

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
)

// heapChildEnv runs TestHeapAheadChild in a process of its own, in the
// mode it names: HeapAhead acts once per process.
const heapChildEnv = "PREFAULT_HEAP_CHILD"

// HeapAhead grows the heap by its block in huge pages and frees the block
// for the allocations that follow, once; not with OODA_PREFAULT=0, not
// for less than HeapAheadMin, not with GOGC below ooda's 400.
func TestHeapAhead(t *testing.T) {
	// Read apart from the code under test, so that a broken reader fails
	// the test rather than skipping it.
	setting, err := os.ReadFile(thpEnabledFile)
	if err != nil {
		t.Skipf("no transparent huge pages: %v", err)
	}
	if always, advised := thpSetting(setting); !always && !advised {
		t.Skipf("%s: %s", thpEnabledFile, bytes.TrimSpace(setting))
	}
	for _, mode := range []string{"on", "off", "small", "gogc"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHeapAheadChild$", "-test.v", "-test.count=1")
			// At ooda's own collector setting (cmd/ooda): at Go's default
			// the runtime gives a freed 8 MiB back to the system at once.
			env := []string{heapChildEnv + "=" + mode, "GOGC=400", "GODEBUG=", EnvVar + "=1"}
			switch mode {
			case "off":
				env = append(env, EnvVar+"=0")
			case "gogc":
				env = append(env, "GOGC=100")
			}
			cmd.Env = append(os.Environ(), env...)
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
	n := 8 << 20 // what a 1,000-domain cycle asks for
	if mode == "small" {
		n = HeapAheadMin - 1
	}
	free0, huge0, fallback0 := heapFreeBytes(), anonHugeKiB(t), vmstat(t, "thp_fault_fallback")
	gcs0 := runtimeMetric("/gc/cycles/total:gc-cycles")
	HeapAhead(n)
	freed := int64(heapFreeBytes()) - int64(free0)
	hugeGained := anonHugeKiB(t) - huge0
	collected := runtimeMetric("/gc/cycles/total:gc-cycles") - gcs0
	if mode != "on" {
		if freed >= int64(n)/2 || hugeGained >= 2048 || collected != 0 {
			t.Fatalf("%s: %d bytes freed, %d KiB of huge pages gained, %d collections: it acted", mode, freed, hugeGained, collected)
		}
		return
	}
	if freed < int64(n)/2 {
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

func TestCollectorKeepsFreedMemory(t *testing.T) {
	for v, want := range map[string]bool{"": true, "off": true, "400": true, "1000": true, "100": false, "399": false, "-1": false, "x": false} {
		t.Setenv("GOGC", v)
		if got := collectorKeepsFreedMemory(); got != want {
			t.Errorf("GOGC=%q: %v, want %v", v, got, want)
		}
	}
}

func TestThpDisabledByGodebug(t *testing.T) {
	for v, want := range map[string]bool{"": false, "disablethp=1": true, "gctrace=1,disablethp=1": true, "disablethp=0": false, "xdisablethp=1": false, "disablethp=10": false} {
		t.Setenv("GODEBUG", v)
		if got := thpDisabledByGodebug(); got != want {
			t.Errorf("GODEBUG=%q: %v, want %v", v, got, want)
		}
	}
}

func TestSizeEnabledFile(t *testing.T) {
	for size, want := range map[uintptr]string{
		2 << 20:   thpDir + "hugepages-2048kB/enabled",
		512 << 20: thpDir + "hugepages-524288kB/enabled",
		1024:      thpDir + "hugepages-1kB/enabled",
	} {
		if got := sizeEnabledFile(nil, size); got != want {
			t.Errorf("sizeEnabledFile(%d) = %q, want %q", size, got, want)
		}
	}
}

func TestReadInto(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "enabled")
	if err := os.WriteFile(f, []byte("always [madvise] never\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf [64]byte
	if got := string(readInto(f, buf[:])); got != "always [madvise] never\n" {
		t.Errorf("readInto = %q", got)
	}
	if got := readInto(f, buf[:8]); string(got) != "always [" {
		t.Errorf("readInto into 8 bytes = %q, want the first 8", got)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{empty, filepath.Join(dir, "missing"), dir} {
		if got := readInto(p, buf[:]); got != nil {
			t.Errorf("readInto(%s) = %q, want nil", p, got)
		}
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
