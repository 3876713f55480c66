package prefault

import (
	"slices"
	"testing"
)

// A /proc/self/maps as a static Go binary has it (addresses cut to 32
// bits, so that the test builds everywhere), with an executable whose
// path holds a space and a line cut short at the end.
const sampleMaps = `00400000-00c00000 r-xp 00000000 fe:00 123 /opt/my tools/ooda
00c00000-01400000 r--p 00800000 fe:00 123 /opt/my tools/ooda
01400000-01480000 rw-p 01000000 fe:00 123 /opt/my tools/ooda
01480000-034c0000 rw-p 00000000 00:00 0
30000000-30400000 rw-p 00000000 00:00 0
30400000-34000000 ---p 00000000 00:00 0
70000000-70100000 r--p 00000000 fe:00 456 /usr/lib/other.so
7ffc0000-7ffe1000 rw-p 00000000 00:00 0                          [stack]
7fff0000-7fff2000 r-xp 00000000 00:00 0                          [vdso]
7fff4000-7fff5000 r-xp 00000000 00:00 0   [trunc`

func TestParseMaps(t *testing.T) {
	maps := parseMaps([]byte(sampleMaps))
	if len(maps) != 9 {
		t.Fatalf("%d mappings, want 9 (the last line is cut short): %+v", len(maps), maps)
	}
	if m := maps[1]; m.start != 0xc00000 || m.end != 0x1400000 || m.perms != "r--p" || m.path != "/opt/my tools/ooda" {
		t.Errorf("second line: %+v", m)
	}
	if m := maps[3]; m.path != "" || m.perms != "rw-p" {
		t.Errorf("anonymous line: %+v", m)
	}
	if m := maps[7]; m.path != "[stack]" {
		t.Errorf("stack line: %+v", m)
	}
	for _, bad := range []string{"", "zz-10 r-xp 0 0 0\n", "10 r-xp 0 0 0\n", "20-10 r-xp 0 0 0\n", "10-20 rx 0 0 0\n", "10-20\n"} {
		if got := parseMaps([]byte(bad)); len(got) != 0 {
			t.Errorf("%q parsed as %+v", bad, got)
		}
	}
}

func TestPlan(t *testing.T) {
	maps := parseMaps([]byte(sampleMaps))
	read, write := plan(maps, 0xd00000, 0x30012345, HeapBytes)
	// The executable's code and read-only data; not its writable data,
	// not another file, not the vdso.
	if want := []region{{0x400000, 0xc00000}, {0xc00000, 0x1400000}}; !slices.Equal(read, want) {
		t.Errorf("read %x, want %x", read, want)
	}
	if want := (region{0x30012000, 0x30212000}); write != want {
		t.Errorf("write %x, want %x", write, want)
	}
	// Near the end of the heap's mapping, the range stops at its end.
	if _, w := plan(maps, 0xd00000, 0x303ff000, HeapBytes); w != (region{0x303ff000, 0x30400000}) {
		t.Errorf("write at the end %x", w)
	}
	// No mapping holds the anchors: nothing is planned.
	if r, w := plan(maps, 0x10, 0x20, HeapBytes); len(r) != 0 || w != (region{}) {
		t.Errorf("unknown anchors planned %x %x", r, w)
	}
	// A heap anchor in a file mapping or a read-only one is not written.
	if _, w := plan(maps, 0xd00000, 0x70000010, HeapBytes); w != (region{}) {
		t.Errorf("wrote in a file mapping: %x", w)
	}
}

func TestHugeInterior(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name string
		r    region
		huge uintptr
		want region
	}{
		{"aligned", region{4 * mib, 12 * mib}, 2 * mib, region{4 * mib, 12 * mib}},
		{"rounded inward", region{4*mib + 4096, 12*mib - 1}, 2 * mib, region{6 * mib, 10 * mib}},
		{"no whole page", region{4*mib + 4096, 6*mib + 4096}, 2 * mib, region{}},
		{"smaller than a page", region{4 * mib, 5 * mib}, 2 * mib, region{}},
		{"size not a power of two", region{0, 12 * mib}, 3 * mib, region{}},
		{"no size", region{0, 12 * mib}, 0, region{}},
		{"end of the address space", region{^uintptr(0) - mib, ^uintptr(0)}, 2 * mib, region{}},
	} {
		if got := hugeInterior(c.r, c.huge); got != c.want {
			t.Errorf("%s: hugeInterior(%x, %x) = %x, want %x", c.name, c.r, c.huge, got, c.want)
		}
	}
}

func TestThpSetting(t *testing.T) {
	for setting, want := range map[string][2]bool{
		"always [madvise] never\n": {false, true},
		"[always] madvise never\n": {true, false},
		"always madvise [never]\n": {false, false},
		"":                         {false, false},
		"madvise":                  {false, false}, // no choice marked
	} {
		if a, m := thpSetting([]byte(setting)); a != want[0] || m != want[1] {
			t.Errorf("thpSetting(%q) = %v, %v; want %v, %v", setting, a, m, want[0], want[1])
		}
	}
}

// The per-size setting, where there is one, wins over the global one,
// unless it says inherit.
func TestThpSizeSetting(t *testing.T) {
	type out struct{ always, advised, ok bool }
	for _, c := range []struct {
		size           string
		always, advise bool
		want           out
	}{
		{"", false, true, out{false, true, true}}, // no per-size file
		{"always [inherit] madvise never\n", false, true, out{false, true, true}},
		{"always [inherit] madvise never\n", true, false, out{true, false, true}},
		{"always inherit madvise [never]\n", false, true, out{false, false, false}},
		{"always inherit [madvise] never\n", true, false, out{false, true, true}},
		{"[always] inherit madvise never\n", false, true, out{true, false, true}},
		{"always inherit madvise never\n", false, true, out{false, false, false}}, // nothing marked
	} {
		var setting []byte
		if c.size != "" {
			setting = []byte(c.size)
		}
		a, m, ok := thpSizeSetting(setting, c.always, c.advise)
		if got := (out{a, m, ok}); got != c.want {
			t.Errorf("thpSizeSetting(%q, always %v, madvise %v) = %+v, want %+v", c.size, c.always, c.advise, got, c.want)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	for in, want := range map[string]uintptr{"2097152\n": 2 << 20, "65536": 64 << 10} {
		if got, ok := parseDecimal([]byte(in)); !ok || got != want {
			t.Errorf("parseDecimal(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "\n", "2M", "-1", "99999999999999999999"} {
		if got, ok := parseDecimal([]byte(in)); ok {
			t.Errorf("parseDecimal(%q) = %d, want no number", in, got)
		}
	}
}
