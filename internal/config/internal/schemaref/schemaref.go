// Package schemaref follows the local references of the configuration's
// JSON Schema. It is its own package so that the config package, linked
// into every ooda process, and keytree, the generator of its key tree,
// share it without the binary linking the generator (and the go/format
// packages the generator needs).
package schemaref

import "strings"

// ResolveRef follows node's "$ref" to the schema node it names: a local
// "#/$defs/NAME" reference, at most eight in a row; any other reference
// leads nowhere (nil). Config's schema walks and the key tree follow
// references alike through it.
func ResolveRef(root, node map[string]any) map[string]any {
	for i := 0; i < 8 && node != nil; i++ {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		if !ok {
			return nil
		}
		defs, _ := root["$defs"].(map[string]any)
		node, _ = defs[name].(map[string]any)
	}
	return node
}
