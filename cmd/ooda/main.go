// Command ooda runs an OODA loop (Observe, Orient, Decide, Act, Reflect)
// over a software project. See README.md and docs/.
package main

import (
	"fmt"
	"os"

	"github.com/ooda-loop/ooda/internal/cli"
	"github.com/ooda-loop/ooda/internal/perfstat"
)

func main() {
	// OODA_CPUPROFILE, OODA_TRACE and OODA_STATS (docs/benchmarks.md)
	// cover the whole process, so they start before anything else and end
	// after the command returned.
	stop := perfstat.Start(func(msg string) { fmt.Fprintf(os.Stderr, "[WARN] %s\n", msg) })
	code := cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
