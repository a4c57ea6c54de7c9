package clock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/clock"
)

func TestSystemIsUTC(t *testing.T) {
	if loc := (clock.System{}).Now().Location(); loc != time.UTC {
		t.Errorf("System.Now().Location() = %v, want UTC", loc)
	}
}

func TestFake(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	start := time.Date(2026, 11, 22, 2, 16, 13, 0, paris)
	f := clock.NewFake(start)
	if got := f.Now(); !got.Equal(start) || got.Location() != time.UTC {
		t.Errorf("NewFake(%v).Now() = %v, want the same instant in UTC", start, got)
	}
	if got, want := f.Now(), f.Now(); !got.Equal(want) {
		t.Errorf("Now() moved without Advance: %v then %v", got, want)
	}

	for _, tt := range []struct {
		name string
		move func()
		want time.Time
	}{
		{"advance", func() { f.Advance(90 * time.Second) }, time.Date(2026, 11, 22, 1, 17, 43, 0, time.UTC)},
		{"advance by nothing", func() { f.Advance(0) }, time.Date(2026, 11, 22, 1, 17, 43, 0, time.UTC)},
		{"set forward", func() { f.Set(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) }, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"set back, other zone", func() { f.Set(time.Date(2026, 1, 1, 1, 0, 0, 0, paris)) }, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"advance nanoseconds", func() { f.Advance(time.Nanosecond) }, time.Date(2026, 1, 1, 0, 0, 0, 1, time.UTC)},
	} {
		tt.move()
		got := f.Now()
		if !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("after %s: Now() = %v, want %v in UTC", tt.name, got, tt.want)
		}
	}
}

func TestFakeConcurrent(t *testing.T) {
	start := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	f := clock.NewFake(start)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for range 50 {
				f.Advance(time.Second)
				_ = f.Now()
			}
		})
	}
	wg.Wait()
	if got, want := f.Now(), start.Add(1000*time.Second); !got.Equal(want) {
		t.Errorf("Now() after 1000 concurrent Advance(1s) = %v, want %v", got, want)
	}
}

func TestDeadlineIsAhead(t *testing.T) {
	before := clock.System{}.Now()
	if d := clock.Deadline(time.Minute); d.Sub(before) < time.Minute {
		t.Errorf("Deadline(1m) = %v, want at least a minute after %v", d, before)
	}
}
