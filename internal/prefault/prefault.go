// Package prefault maps, when the process starts, the memory an ooda
// command is about to touch page by page: the executable's code and
// read-only data, and the first megabytes of the heap it will allocate
// from. A short process such as `ooda cycle` touches a few hundred pages
// of each for the first time, and on a virtual machine every such page
// fault leaves the guest (10–25 µs each where docs/benchmarks.md measured
// it, against well under one when a single madvise call maps them all), so
// the faults alone were a fifth of a cycle's CPU time.
//
// Its work is done by its package initialisation, which is why cmd/ooda
// imports it and why it imports nothing but syscall and what syscall
// itself depends on (runtime, sync/atomic, unsafe): the Go runtime
// initialises packages in dependency order and, among those ready, by
// import path, so a package with no other dependencies runs before the
// libraries whose initialisation is most of the faults.
//
// A command that learns it is about to allocate much more (a cycle of
// hundreds of domains) calls HeapAhead, which grows the heap by that
// much at once, in huge pages where the kernel gives them. One that
// learns how much it is about to allocate past what the start mapped (a
// cycle whose state is large, once it has read it) calls HeapFor, which
// maps that much of the heap from where its next allocations go.
//
// OODA_PREFAULT=0 turns them all off; elsewhere than Linux they do
// nothing, and on Linux before 5.14, which cannot map memory ahead,
// nothing is mapped and HeapAhead only advises huge pages.
package prefault

// EnvVar names the environment variable that turns prefaulting off when
// set to 0.
const EnvVar = "OODA_PREFAULT"

// HeapBytes is how much of the heap, from the first object the process
// allocated upward, is mapped at start: about what a cycle of a few
// domains allocates before it exits (docs/benchmarks.md).
const HeapBytes = 2 << 20

// region is a range of the process's address space, [start, end).
type region struct{ start, end uintptr }

// mapping is one line of /proc/self/maps.
type mapping struct {
	region
	perms string // "r-xp", "rw-p", …
	path  string // the file mapped, or "" (anonymous, [heap], [stack] …)
}

// parseMaps reads the lines of /proc/self/maps in b. A line cut short at
// the end of b (the buffer was full) is left out, as is any line that does
// not parse: the caller only gives up a little speed for it.
func parseMaps(b []byte) []mapping {
	var out []mapping
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		if i == len(b) {
			break // no newline: cut short
		}
		if m, ok := parseLine(b[:i]); ok {
			out = append(out, m)
		}
		b = b[i+1:]
	}
	return out
}

// parseLine parses "start-end perms offset dev inode [path]".
func parseLine(line []byte) (mapping, bool) {
	var m mapping
	var fields [6][]byte
	n := 0
	for i := 0; i < len(line) && n < 6; {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		if n == 5 {
			j = len(line) // the path is the rest of the line, spaces and all
		} else {
			for j < len(line) && line[j] != ' ' {
				j++
			}
		}
		fields[n] = line[i:j]
		n++
		i = j
	}
	if n < 5 || len(fields[1]) != 4 {
		return m, false
	}
	dash := -1
	for i, c := range fields[0] {
		if c == '-' {
			dash = i
			break
		}
	}
	if dash < 0 {
		return m, false
	}
	var ok1, ok2 bool
	m.start, ok1 = parseHex(fields[0][:dash])
	m.end, ok2 = parseHex(fields[0][dash+1:])
	if !ok1 || !ok2 || m.end <= m.start {
		return m, false
	}
	m.perms = string(fields[1])
	if n == 6 {
		m.path = string(fields[5])
	}
	return m, true
}

// parseHex parses a lowercase hexadecimal address.
func parseHex(b []byte) (uintptr, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uintptr
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uintptr(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uintptr(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// plan picks, from the mappings, the executable's read-only ones — those
// of the file that holds rodata, an address inside it, and not writable —
// and the heap's range from heap (an object just allocated) up to
// heapBytes further, cut at the end of its mapping.
func plan(maps []mapping, rodata, heap, heapBytes uintptr) (read []region, write region) {
	exe := ""
	for _, m := range maps {
		if m.start <= rodata && rodata < m.end {
			exe = m.path
		}
	}
	for _, m := range maps {
		if exe != "" && m.path == exe && len(m.perms) == 4 && m.perms[0] == 'r' && m.perms[1] != 'w' {
			read = append(read, m.region)
		}
		if m.start <= heap && heap < m.end && m.perms == "rw-p" && m.path == "" {
			start := heap &^ (pageSize - 1)
			write = region{start, min(m.end, start+heapBytes)}
		}
	}
	return read, write
}

// pageSize is the smallest page size of the architectures ooda is built
// for; a range rounded down to it is rounded down to any larger one's
// boundary by the kernel, which rounds the length up.
const pageSize = 4096

// The bounds of HeapAhead's n: below HeapAheadMin the collection it
// costs takes about what it saves (measured even at 550 domains, about
// 4.4 MiB, docs/benchmarks.md); HeapAheadMax caps what a wrong estimate
// can cost in memory.
const (
	HeapAheadMin = 6 << 20
	HeapAheadMax = 64 << 20
)

// hugeInterior is the part of r made of whole huge pages of size huge
// (a power of two): r's start rounded up, its end rounded down.
func hugeInterior(r region, huge uintptr) region {
	if huge == 0 || huge&(huge-1) != 0 {
		return region{}
	}
	start := (r.start + huge - 1) &^ (huge - 1)
	end := r.end &^ (huge - 1)
	if start < r.start || end <= start { // wrapped, or no whole page
		return region{}
	}
	return region{start, end}
}

// thpSetting reads the kernel's transparent huge page setting (the
// contents of /sys/kernel/mm/transparent_hugepage/enabled, "always
// [madvise] never"): whether all anonymous memory gets huge pages, or
// memory advised to have them.
func thpSetting(setting []byte) (always, advised bool) {
	return contains(setting, "[always]"), contains(setting, "[madvise]")
}

// thpSizeSetting applies a per-size setting ("always inherit madvise
// [never]"; nil where the kernel has none) over the global one; ok is
// false when huge pages of that size would not come.
func thpSizeSetting(setting []byte, always, advised bool) (bool, bool, bool) {
	switch {
	case setting == nil || contains(setting, "[inherit]"):
	case contains(setting, "[always]"):
		always, advised = true, false
	case contains(setting, "[madvise]"):
		always, advised = false, true
	default: // [never], or a choice not known
		return false, false, false
	}
	return always, advised, always || advised
}

// contains is bytes.Contains, which this package does not import (see the
// package comment).
func contains(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return true
		}
	}
	return false
}

// parseDecimal parses a decimal number such as /sys's hpage_pmd_size.
func parseDecimal(b []byte) (uintptr, bool) {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return 0, false
	}
	var v uintptr
	for _, c := range b {
		if c < '0' || c > '9' || v > (^uintptr(0)-9)/10 {
			return 0, false
		}
		v = v*10 + uintptr(c-'0')
	}
	return v, true
}
