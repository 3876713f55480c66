// Package examples embeds the example projects shipped with ooda, so that
// `ooda demo` runs without the source tree or a network.
package examples

import "embed"

// Service is the demo's example project: a tiny Go shop service with
// tests, its config.json, and the scripted coding agent. Its go.mod is
// written by the demo (a go.mod here would make it a module of its own,
// which cannot be embedded).
//
//go:embed all:service
var Service embed.FS

// Quickstart is the quickstart example project (config.json and its skills).
//
//go:embed quickstart
var Quickstart embed.FS
