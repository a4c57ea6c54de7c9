package storetest

import (
	"sync"
	"testing"
)

// race runs try in racers goroutines at once and returns how many won.
func race(t *testing.T, try func() (bool, error)) int {
	t.Helper()
	const racers = 8
	wins := make([]bool, racers)
	errs := make([]error, racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			<-start
			wins[i], errs[i] = try()
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i := range racers {
		if errs[i] != nil {
			t.Errorf("racer %d: error = %v", i, errs[i])
		}
		if wins[i] {
			won++
		}
	}
	return won
}
