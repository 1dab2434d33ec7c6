//go:build !linux

package helper

// run refuses: the helper is implemented on Linux only.
func run(Spec, string, []string) string { return "the sandbox helper is implemented on Linux only" }

// launch refuses: the helper is implemented on Linux only.
func launch([]string) string { return "the sandbox helper is implemented on Linux only" }
