// Package dispatch is the dispatch engine of the code dshgen generates: the listener
// lists, registrars and the runners of every authority kind (waterfall, guard, wrapper,
// fold, notification, observer, vote), generic over an event's payload, decision and
// listener types. A generated package keeps only what varies per event (its listener
// types, the List of each event, its registration methods and runners, the scope of its
// payloads and the check of its decision unions) and calls into this package, as
// protobuf-go's generated code calls its implementation through protoimpl.
//
// It is part of the codec runtime and versioned with it: the generated code that uses it
// states the codec version it needs (see codec.EnforceVersion), so a mismatch of the two
// fails the build. Its exported names exist for generated code; a program uses them
// through a generated package (its Registry, Registrar, ListenerError, ...), whose types
// are aliases of these. It imports only the standard library.
package dispatch
