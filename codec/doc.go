// Package codec is the runtime of the Go code dshgen generates: the JSON encoder, the strict
// decoder helpers, the decoding errors and the union kind peeking that every generated
// package (generated/dsh, generated/conformance, generated/wire/*, and a plugin module's own
// generated packages) calls instead of carrying a copy, as protobuf-go's generated code calls
// protoimpl.
//
// It is not an API for plugin authors: its exported names exist for generated code, which
// imports only the standard library and this package. Plugin authors use what the generated
// packages re-export (DecodeError, ErrUnknownField, ...; they are the same values, so
// errors.Is and errors.As work with either). It is kept stable enough that a plugin module's
// generated code and the dsh version it depends on agree, and the generated code checks that
// at compile time (see EnforceVersion). It imports only the standard library.
//
// # Encoding
//
// A generated record encodes itself field by field into an [Encoder], which appends JSON to
// one buffer, taken from a pool and copied out once by [Encoder.Finish]: no reflection and no
// intermediate value per field. The output is byte for byte what encoding/json.Marshal makes
// of the same values (strings HTML-escaped, invalid UTF-8 replaced by U+FFFD, floats
// formatted alike, map keys sorted, raw JSON compacted).
//
// # Decoding
//
// Decoding is strict and agrees with the exported JSON Schemas: an [ObjectDecoder] reads an
// object field by field ([Required], [Optional], [Default]) and [ObjectDecoder.Finish]
// rejects the fields no one read. Every error is a *[DecodeError] naming the type and field
// at fault and wrapping one of the Err* sentinels or an encoding/json error.
package codec

// EnforceVersion is used by generated code to check, at compile time, that it and this
// package agree. A generated package's meta_codec.go declares
//
//	const (
//		_ = codec.EnforceVersion(1 - codec.MinVersion) // the generated code is recent enough
//		_ = codec.EnforceVersion(codec.MaxVersion - 1) // this runtime is recent enough
//	)
//
// with 1 standing for the [Version] of the dshgen that wrote it.
// Converting a negative constant to an unsigned type does not compile, so a build fails,
// naming the generated file, when the generated code is older than MinVersion (regenerate
// it with the dshgen of the dsh version the module depends on) or newer than MaxVersion
// (upgrade the dsh dependency).
type EnforceVersion uint

const (
	// Version is the version of the generated-code contract this package implements; dshgen
	// writes it into the code it generates. It grows when generated code starts calling
	// something new: 2 added Unmarshal (the generated session-event decoder calls it); 3
	// added the dispatch engine, package codec/dispatch (the generated registry and runners
	// call it).
	Version = 3
	// MinVersion is the oldest generated code this package still runs.
	MinVersion = 1
	// MaxVersion is the newest generated code this package runs.
	MaxVersion = Version
)
