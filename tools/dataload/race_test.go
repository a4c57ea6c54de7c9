//go:build race

package main

// raceEnabled reports that the tests run with the race detector, under
// which SQLite, Go code compiled from C, runs instrumented and tens of
// times slower.
const raceEnabled = true
