// Package spec embeds the dsh spec (the top-level .cue files of this directory), so that
// tests and tools load exactly the spec the generated code came from.
//
// The spec itself is CUE; see meta.cue for the conventions every file follows.
package spec

import "embed"

//go:generate go run ../cmd/dshgen generate -spec . -out ../generated -docs ../docs/catalog.md

// FS holds the spec's .cue files.
//
//go:embed *.cue
var FS embed.FS
