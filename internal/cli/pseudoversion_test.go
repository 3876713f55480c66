package cli

import (
	"math/rand"
	"regexp"
	"testing"
)

// pseudoVersionPattern is the regular expression pseudoVersion was written
// from; the test holds the hand-written matcher to it.
var pseudoVersionPattern = regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(\+incompatible)?(\+dirty)?$`)

func checkPseudoVersion(t *testing.T, v string) {
	t.Helper()
	stamp, hash, ok := pseudoVersion(v)
	m := pseudoVersionPattern.FindStringSubmatch(v)
	if ok != (m != nil) || ok && (stamp != m[1] || hash != m[2]) {
		t.Fatalf("pseudoVersion(%q) = %q, %q, %v; the pattern says %q", v, stamp, hash, ok, m)
	}
}

func TestPseudoVersionAsThePattern(t *testing.T) {
	versions := []string{
		"v0.0.0-20260102150405-abcdef123456",
		"v1.2.4-0.20260102150405-abcdef123456",
		"v1.2.3-pre.0.20260102150405-abcdef123456",
		"v2.0.0-20260102150405-abcdef123456+incompatible",
		"v0.0.0-20260102150405-abcdef123456+dirty",
		"v2.0.0-20260102150405-abcdef123456+incompatible+dirty",
		"v0.0.0-20260102150405-abcdef123456+dirty+incompatible",
		"v0.0.0-20260102150405-abcdef123456+dirty+dirty",
		"v0.0.0-20260102150405-ABCDEF123456",
		"v0.0.0-2026010215040-abcdef123456",
		"v0.0.0-202601021504055-abcdef123456",
		"v0.0.0_20260102150405-abcdef123456",
		"-20260102150405-abcdef123456",
		".20260102150405-abcdef123456",
		"20260102150405-abcdef123456",
		"v0.0.0-20260102150405-abcdef12345g",
		"v0.0.0-2026010215040x-abcdef123456",
		"v0.0.0-20260102150405_abcdef123456",
		"v0.0.0-20260102150405-abcdef123456\n",
		"v0.0.0-٢٠٢٦٠١٠٢١٥٠٤٠٥-abcdef123456",
		"v1.4.0", "(devel)", "", "+dirty", "+incompatible+dirty",
	}
	for _, v := range versions {
		checkPseudoVersion(t, v)
	}
	// Each version with one byte changed, removed or doubled, anywhere.
	r := rand.New(rand.NewSource(1))
	alphabet := "0123456789abcdefgABCDEF-.+vxyz\n"
	for _, v := range versions {
		for i := range v {
			checkPseudoVersion(t, v[:i]+v[i+1:])
			checkPseudoVersion(t, v[:i]+v[i:i+1]+v[i:])
			for k := 0; k < 4; k++ {
				checkPseudoVersion(t, v[:i]+string(alphabet[r.Intn(len(alphabet))])+v[i+1:])
			}
		}
	}
}
