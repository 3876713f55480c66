package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Remembered verdicts. Compiling the 47 KB schema and validating a
// configuration against it is most of what loading costs, and every
// `ooda cycle` is a new process loading the same, unchanged config.json.
// So a configuration found valid is remembered, in the user's cache
// directory, by a hash of everything the verdict depends on: this binary,
// the schema and the configuration's bytes. A configuration whose hash is
// remembered skips the schema; any other is validated in full. Only
// "valid" is ever remembered: a failure is found again, with its report,
// every time. The checks that depend on the file system (the configured
// paths) and the warnings (unknown keys) run every time, cached or not.
//
// The cache lives outside the project on purpose: a file under agent/state/
// can be committed, so a cloned repository could carry an entry declaring
// its own invalid configuration valid. An entry in the user's cache is
// only as trustworthy as the user's home directory, which ooda trusts
// anyway (it runs the user's git).

// NoCacheEnv turns the remembered verdicts off when set to any non-empty
// value: every configuration is then validated against the schema.
const NoCacheEnv = "OODA_NO_CACHE"

const (
	// verdictHeader starts the verdict file; a file without it is ignored.
	verdictHeader = "ooda config verdicts 1"
	// maxVerdicts bounds the remembered verdicts, the oldest forgotten
	// first: a user edits a handful of configurations, not thousands.
	maxVerdicts = 64
	// maxVerdictBytes bounds the read of the verdict file: the header and
	// maxVerdicts hashes of 64 hex digits, each on its line, fit in it.
	maxVerdictBytes = 8 << 10
)

// verdictsInTests lets this package's tests use the cache (in the
// directory they point XDG_CACHE_HOME at); any other test binary leaves
// it off, so that no test of the packages loading a configuration writes
// into the real home directory.
var verdictsInTests = false

// inTestBinary reports whether this process is a Go test binary, as
// testing.Testing does, from the flag every test binary registers before
// its tests run: importing the testing package for its answer linked it,
// and its dependencies, into every ooda process.
func inTestBinary() bool { return flag.Lookup("test.v") != nil }

// verdictFile is the file holding the remembered verdicts, or "" when they
// are off: OODA_NO_CACHE set, no user cache directory, or a test binary.
func verdictFile() string {
	if os.Getenv(NoCacheEnv) != "" || (inTestBinary() && !verdictsInTests) {
		return ""
	}
	dir, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(dir) {
		return ""
	}
	return filepath.Join(dir, "ooda", "config-valid")
}

// binaryIdentity identifies this build: its module versions and VCS
// stamp, and the executable file's size and modification time, so that
// any rebuild (a changed check, a changed rule) starts with no verdicts.
// "" when the executable cannot be found, which turns the cache off.
var binaryIdentity = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(exe)
	b.WriteString("\x00" + strconv.FormatInt(fi.Size(), 10) + "\x00" + strconv.FormatInt(fi.ModTime().UnixNano(), 10) + "\x00")
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.WriteString(bi.String())
	}
	return b.String()
})

// verdictSchemaSum is the schema's part of a verdict's key: schemaSum, a
// variable only so that the tests can stand in another schema.
var verdictSchemaSum = schemaSum

// verdictKey is the hash a verdict about raw is remembered under, "" when
// the binary cannot be identified.
func verdictKey(raw []byte) string {
	id := binaryIdentity()
	if id == "" {
		return ""
	}
	h := sha256.New()
	// Each part with its length, so that no two different triples hash
	// the same bytes.
	// The schema by its hash (schemaSum, generated with the key tree and
	// held to schema.json by TestKeyTreeIsGenerated): hashing its 47 KB
	// here cost every process about half a millisecond.
	for _, part := range [][]byte{[]byte("ooda config verdict 2"), []byte(id), []byte(verdictSchemaSum), raw} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// readVerdicts is the remembered hashes, oldest first; nil when the file
// is missing, unreadable, too large, not a regular file or not in the
// expected form, all of which mean "validate".
func readVerdicts(file string) []string {
	b, err := readRegular(file, syscall.O_NOFOLLOW, maxVerdictBytes)
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) == 0 || lines[0] != verdictHeader {
		return nil
	}
	keys := lines[1:]
	for _, k := range keys {
		if len(k) != sha256.Size*2 || strings.Trim(k, "0123456789abcdef") != "" {
			return nil
		}
	}
	return keys
}

// knownValid reports whether raw was found valid by this binary before.
func knownValid(raw []byte) bool {
	file := verdictFile()
	if file == "" {
		return false
	}
	key := verdictKey(raw)
	if key == "" {
		return false
	}
	for _, k := range readVerdicts(file) {
		if k == key {
			return true
		}
	}
	return false
}

// rememberValid records that raw was found valid. The file is replaced
// atomically (a new file renamed over it), so a reader sees the old list
// or the new one; two processes recording at once may lose one entry,
// which only costs a validation. Failures are ignored: the cache only
// ever saves work.
func rememberValid(raw []byte) {
	file := verdictFile()
	if file == "" {
		return
	}
	key := verdictKey(raw)
	if key == "" {
		return
	}
	keys := readVerdicts(file)
	for _, k := range keys {
		if k == key {
			return
		}
	}
	keys = append(keys, key)
	if len(keys) > maxVerdicts {
		keys = keys[len(keys)-maxVerdicts:]
	}
	var buf bytes.Buffer
	buf.WriteString(verdictHeader + "\n")
	for _, k := range keys {
		buf.WriteString(k + "\n")
	}
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".config-valid-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(buf.Bytes())
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
		_ = os.Remove(tmp.Name())
	}
}
