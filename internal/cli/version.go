package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// Version, Commit and Date may be set at build time, for a build that has
// no module or VCS information of its own (a distribution's package
// built from a source tarball):
//
//	go build -ldflags "-X github.com/ooda-loop/ooda/internal/cli.Version=v1.2.3 \
//	  -X github.com/ooda-loop/ooda/internal/cli.Commit=abc123 \
//	  -X github.com/ooda-loop/ooda/internal/cli.Date=2026-01-02T15:04:05Z" ./cmd/ooda
//
// Each one set wins over what the binary's build information says.
var (
	// Version is the ooda version; "dev" means "not set".
	Version = "dev"
	// Commit is the commit the binary was built from; "" means "not set".
	Commit = ""
	// Date is when the binary was built (RFC 3339); "" means "not set".
	Date = ""
)

// buildVersion is what `ooda version` reports.
type buildVersion struct {
	Version    string
	Module     string
	Commit     string
	Modified   *bool
	Date       string
	DateSource string // "commit" (vcs.time, a pseudo-version), "build" (-ldflags) or ""
	Go         string
	Platform   string
}

// pseudoVersion returns the commit time and hash at the tail of a Go
// pseudo-version (v0.0.0-20260102150405-abcdef123456,
// v1.2.4-0.20260102150405-abcdef123456,
// v1.2.3-pre.0.20260102150405-abcdef123456, then +incompatible, then
// +dirty, each optional): what `go install module@commit` builds has no
// VCS information, only this. ok is false for any other version. It is
// the regular expression [-.](\d{14})-([0-9a-f]{12})(\+incompatible)?(\+dirty)?$
// written out, which every process would otherwise compile at start to
// fill in root.Version.
func pseudoVersion(v string) (stamp, hash string, ok bool) {
	v = strings.TrimSuffix(v, "+dirty")
	v = strings.TrimSuffix(v, "+incompatible")
	const n = len("-20260102150405-abcdef123456")
	if len(v) < n {
		return "", "", false
	}
	tail := v[len(v)-n:]
	if tail[0] != '-' && tail[0] != '.' || tail[15] != '-' {
		return "", "", false
	}
	stamp, hash = tail[1:15], tail[16:]
	for i := 0; i < len(stamp); i++ {
		if stamp[i] < '0' || stamp[i] > '9' {
			return "", "", false
		}
	}
	for i := 0; i < len(hash); i++ {
		if (hash[i] < '0' || hash[i] > '9') && (hash[i] < 'a' || hash[i] > 'f') {
			return "", "", false
		}
	}
	return stamp, hash, true
}

// readVersion assembles the version from the build information: the main
// module's version (vX for `go install …@vX`; "(devel)" for `go run` and
// for builds outside a tagged checkout), the vcs.revision, vcs.time and
// vcs.modified settings `go build` records in a checkout, and the Go
// toolchain. What -ldflags set wins.
func readVersion(info *debug.BuildInfo, ok bool) buildVersion {
	v := buildVersion{Version: "(devel)", Module: "github.com/ooda-loop/ooda", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if ok && info != nil {
		if info.Main.Path != "" {
			v.Module = info.Main.Path
		}
		if info.Main.Version != "" {
			v.Version = info.Main.Version
		}
		if info.GoVersion != "" {
			v.Go = info.GoVersion
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.time":
				v.Date, v.DateSource = s.Value, "commit"
			case "vcs.modified":
				m := s.Value == "true"
				v.Modified = &m
			}
		}
		if stamp, hash, ok := pseudoVersion(v.Version); ok && v.Commit == "" {
			v.Commit = hash
			if t, err := time.Parse("20060102150405", stamp); err == nil && v.Date == "" {
				v.Date, v.DateSource = t.UTC().Format(time.RFC3339), "commit"
			}
		}
	}
	if Version != "" && Version != "dev" {
		v.Version = Version
	}
	if Commit != "" {
		v.Commit = Commit
	}
	if Date != "" {
		v.Date, v.DateSource = Date, "build"
	}
	return v
}

// currentVersion is the version of the running binary.
func currentVersion() buildVersion { return readVersion(debug.ReadBuildInfo()) }

// firstLine is what `--version` prints, and the first line of `ooda
// version`.
func (v buildVersion) firstLine() string {
	return "ooda " + v.Version
}

// text is the human form of `ooda version`.
func (v buildVersion) text() string {
	var b strings.Builder
	b.WriteString(v.firstLine() + "\n")
	fmt.Fprintf(&b, "module:  %s\n", v.Module)
	switch {
	case v.Commit == "":
		b.WriteString("commit:  unknown (built without version control information: `go run`, `-buildvcs=false`, or outside a git checkout)\n")
	case v.Modified != nil && *v.Modified:
		fmt.Fprintf(&b, "commit:  %s, with uncommitted changes\n", v.Commit)
	default:
		fmt.Fprintf(&b, "commit:  %s\n", v.Commit)
	}
	switch v.DateSource {
	case "build":
		fmt.Fprintf(&b, "built:   %s\n", v.Date)
	case "commit":
		// The build information has no build time; the commit's time is
		// the closest honest date.
		fmt.Fprintf(&b, "date:    %s (commit time)\n", v.Date)
	default:
		b.WriteString("date:    unknown\n")
	}
	fmt.Fprintf(&b, "go:      %s %s\n", v.Go, v.Platform)
	return b.String()
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, date and Go version of this binary",
		Long: `Print the module version (vX.Y.Z for ` + "`go install …@vX.Y.Z`" + `, "(devel)" for
` + "`go run`" + ` and for builds outside a tagged checkout), the commit and its date
from the binary's build information, and the Go version it was built with.
--version prints the first line only.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := currentVersion()
			if g.json {
				return g.printJSON(map[string]any{"version": v.Version, "module": v.Module, "commit": strp(v.Commit),
					"modified": v.Modified, "date": strp(v.Date), "date_source": strp(v.DateSource), "go": v.Go, "platform": v.Platform})
			}
			_, err := fmt.Fprint(g.stdout, v.text())
			return err
		},
	}
}
