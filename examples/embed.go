// Package examples embeds the example projects shipped with ooda, so that
// `ooda demo` runs without the source tree or a network.
package examples

import "embed"

// Quickstart is the quickstart example project (config.json and its skills).
//
//go:embed quickstart
var Quickstart embed.FS
