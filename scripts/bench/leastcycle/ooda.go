//go:build !bare

package main

import (
	"github.com/ooda-loop/ooda/internal/cli"
	// As cmd/ooda imports it: its initialisation is part of the start.
	_ "github.com/ooda-loop/ooda/internal/prefault"
)

// Linking cli keeps every package of ooda, and its initialisation, in the
// binary: what figure k measures is a cycle process that starts as ooda
// does. A bare build (-tags bare, figure m) leaves this file out.
func init() { oodaMain = cli.Main }
