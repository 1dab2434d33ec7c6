// Package spec embeds the dsh spec (the top-level .cue files of this directory), its wire
// packages (wire/*.cue, one CUE package per external hook protocol), the bridge mapping
// tables (bridges/*.cue), the conformance scenarios (conformance/*.cue) and the dialects'
// recorded toolsets (toolsets/*.json), so that tests
// and tools load exactly the spec the generated code came from (gen.LoadFS over spec.FS).
//
// The spec itself is CUE; see meta.cue for the conventions every file follows.
package spec

import "embed"

//go:generate go run ../cmd/dshgen generate -spec . -out ../generated -docs ../docs/catalog.md

// FS holds the spec's .cue files: the canonical spec at the top level, the wire packages
// under wire/, the bridge tables under bridges/, the scenarios under conformance/; and
// under toolsets/ each dialect's toolset, recorded from its engine as JSON
// (runtime/tools/builtin reads them).
//
//go:embed *.cue wire/*.cue bridges/*.cue conformance/*.cue toolsets
var FS embed.FS
