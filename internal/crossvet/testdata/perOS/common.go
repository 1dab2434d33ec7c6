// Package perOS is crossvet's test input: code that builds on Linux but not on Windows
// (a type error) and vets clean on Linux but not on darwin (a printf misuse).
package perOS

// Name is the platform's name.
func Name() string { return name() }
