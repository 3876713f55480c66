// Command genkeys writes keytree_gen.go, the key tree of the configuration
// schema (see package keytree), from schema.json. It runs from the config
// package's directory: `go generate ./internal/config/`.
package main

import (
	"fmt"
	"os"

	"github.com/ooda-loop/ooda/internal/config/internal/keytree"
)

func main() {
	schema, err := os.ReadFile("schema.json")
	if err == nil {
		var src []byte
		if src, err = keytree.Source(schema); err == nil {
			err = os.WriteFile("keytree_gen.go", src, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genkeys:", err)
		os.Exit(1)
	}
}
