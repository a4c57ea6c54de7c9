package gather_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/gather"
)

type job struct {
	n       int
	answer  int
	answers atomic.Int64
}

// gate is a run function that holds every group until released, and
// records the groups it ran.
type gate struct {
	hold    atomic.Bool
	held    chan struct{}
	release chan struct{}
	mu      sync.Mutex
	groups  [][]int
}

func newGate() *gate {
	return &gate{held: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) run(group []*job) {
	if g.hold.Load() {
		g.held <- struct{}{}
		<-g.release
	}
	ns := make([]int, len(group))
	for i, j := range group {
		ns[i] = j.n
		j.answer = j.n * 10
		j.answers.Add(1)
	}
	g.mu.Lock()
	g.groups = append(g.groups, ns)
	g.mu.Unlock()
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
	}
}

// TestGroup: calls that find a slot go alone; the calls that arrive while
// every slot is out wait and go as groups of at most most, in the order
// they came; one whose context ends while it waits leaves; each call is
// answered once.
func TestGroup(t *testing.T) {
	ctx := t.Context()
	gt := newGate()
	g := gather.New(2, 3, gt.run)

	j := &job{n: 1}
	if err := g.Do(ctx, j); err != nil || j.answer != 10 {
		t.Fatalf("Do() = %v, answer %d; want nil, 10", err, j.answer)
	}

	gt.hold.Store(true)
	var wg sync.WaitGroup
	jobs := []*job{}
	start := func(n int) {
		j := &job{n: n}
		jobs = append(jobs, j)
		wg.Go(func() {
			if err := g.Do(ctx, j); err != nil {
				t.Errorf("Do(%d) error = %v", n, err)
			}
		})
	}
	start(2)
	<-gt.held
	start(3)
	<-gt.held
	gt.hold.Store(false)
	for n := 4; n <= 8; n++ {
		start(n)
		waitFor(t, func() bool { return g.Waiting() == n-3 })
	}
	gone, cancel := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() { left <- g.Do(gone, &job{n: 99}) }()
	waitFor(t, func() bool { return g.Waiting() == 6 })
	cancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Errorf("Do() of a call that left = %v, want context.Canceled", err)
	}
	if n := g.Waiting(); n != 5 {
		t.Errorf("Waiting() = %d after one left, want 5", n)
	}
	close(gt.release)
	wg.Wait()
	for _, j := range jobs {
		if j.answer != j.n*10 || j.answers.Load() != 1 {
			t.Errorf("job %d: answer %d, answered %d times; want %d, once", j.n, j.answer, j.answers.Load(), j.n*10)
		}
	}
	// 1 alone; 2 and 3 alone and held; then 4..8 in groups of at most 3,
	// in order: the first slot to free takes 4, 5, 6, the next 7, 8.
	want := [][]int{{1}, {2}, {3}, {4, 5, 6}, {7, 8}}
	gt.mu.Lock()
	got := gt.groups
	gt.mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("groups = %v, want %v", got, want)
	}
	byFirst := map[int][]int{}
	for _, grp := range got {
		byFirst[grp[0]] = grp
	}
	for _, w := range want {
		if grp := byFirst[w[0]]; len(grp) != len(w) || grp[len(grp)-1] != w[len(w)-1] {
			t.Errorf("groups = %v, want %v", got, want)
			break
		}
	}
	if n := g.Waiting(); n != 0 {
		t.Errorf("Waiting() = %d at the end, want 0", n)
	}
}

// TestGroupUnderLoad: many callers at once; every call is answered once,
// no group is larger than most, and no more than slots run at a time.
func TestGroupUnderLoad(t *testing.T) {
	var running, most atomic.Int64
	var largest atomic.Int64
	run := func(group []*job) {
		if r := running.Add(1); r > most.Load() {
			most.Store(r)
		}
		if n := int64(len(group)); n > largest.Load() {
			largest.Store(n)
		}
		for _, j := range group {
			j.answer = j.n * 10
			j.answers.Add(1)
		}
		time.Sleep(50 * time.Microsecond)
		running.Add(-1)
	}
	g := gather.New(2, 8, run)
	var wg sync.WaitGroup
	var wrong atomic.Int64
	for w := range 64 {
		wg.Go(func() {
			for i := range 200 {
				j := &job{n: w*1000 + i}
				if err := g.Do(t.Context(), j); err != nil || j.answer != j.n*10 || j.answers.Load() != 1 {
					wrong.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d calls answered wrongly", n)
	}
	if n := largest.Load(); n > 8 || n < 2 {
		t.Errorf("largest group = %d, want 2 to 8", n)
	}
	if n := most.Load(); n > 2 {
		t.Errorf("%d groups ran at once, want at most 2", n)
	}
}

// TestGroupRunPanics: a run that panics still frees its slot and answers
// the calls that wait, so nothing waits for ever.
func TestGroupRunPanics(t *testing.T) {
	g := gather.New(1, 4, func(group []*job) {
		if group[0].n == 0 {
			panic("run failed")
		}
		for _, j := range group {
			j.answer = j.n * 10
		}
	})
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Do() of a panicking run did not panic")
			}
		}()
		g.Do(t.Context(), &job{n: 0})
	}()
	j := &job{n: 5}
	if err := g.Do(t.Context(), j); err != nil || j.answer != 50 {
		t.Errorf("Do() after a panic = %v, answer %d; want nil, 50", err, j.answer)
	}
}
