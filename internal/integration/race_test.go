//go:build race

package integration

// raceEnabled reports that the tests run with the race detector, so the
// binary under test is built with it too.
const raceEnabled = true
