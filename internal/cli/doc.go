// Package cli is ooda's command line: one file per command, each filling an
// options struct from its flags and then running, so parsing and running
// are tested apart. Exit codes are mapped in one place (exit.go).
package cli
