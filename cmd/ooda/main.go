// Command ooda runs an OODA loop (Observe, Orient, Decide, Act, Reflect)
// over a software project. See README.md and docs/.
package main

import (
	"os"

	"github.com/ooda-loop/ooda/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
