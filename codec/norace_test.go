//go:build !race

package codec

// raceEnabled: see race_test.go.
const raceEnabled = false
