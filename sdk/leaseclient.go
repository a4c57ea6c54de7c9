package sdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Lease is this machine's place in its licence's floating use
// (docs/floating.md), taken by Client.Lease or Client.Borrow. Renewals run
// in the background until Close; while the server cannot be reached the
// lease is kept, and Valid stays true, until its end.
type Lease struct {
	c         *Client
	key       string
	licenceID string
	borrowed  bool

	mu      sync.Mutex // guards what follows
	raw     string
	verdict *Verdict
	ends    time.Time
	err     error // the last renewal's failure, nil after a success

	stop chan struct{}
	done chan struct{}
}

// Lease takes a lease for this machine, which must hold a live activation
// (Activate first: otherwise the server answers activation_required), and
// renews it in the background at half its length until Close, which
// gives it back. A refusal (concurrency_limit_reached with its
// retry_after_seconds in the *Error's Details) is returned as an *Error.
func (c *Client) Lease(ctx context.Context) (*Lease, error) {
	return c.takeLease(ctx, 0)
}

// Borrow takes a lease of hours (1 to the product's max_borrow_hours) for
// a machine going offline: its verdict holds offline until the end, with
// no renewal. Close gives the place back early.
func (c *Client) Borrow(ctx context.Context, hours int) (*Lease, error) {
	if hours < 1 {
		return nil, errors.New("borrow: hours must be 1 or more")
	}
	return c.takeLease(ctx, hours)
}

func (c *Client) takeLease(ctx context.Context, hours int) (*Lease, error) {
	c.mu.Lock()
	key, licenceID, keyOK := c.rec.LicenceKey, c.licenceID, c.keyOK
	c.mu.Unlock()
	if key == "" {
		return nil, ErrNoLicence
	}
	if !keyOK {
		return nil, ErrLicenceKeyInvalid
	}
	l := &Lease{c: c, key: key, licenceID: licenceID, borrowed: hours > 0, stop: make(chan struct{}), done: make(chan struct{})}
	if err := l.request(ctx, pathLease, leaseRequest{LicenceKey: key, MachineID: c.machineID, BorrowHours: hours}); err != nil {
		return nil, fmt.Errorf("lease: %w", err)
	}
	if l.borrowed {
		close(l.done)
	} else {
		go l.renew()
	}
	return l, nil
}

// request sends a take or renewal and keeps the lease it answers, once
// its verdict checks.
func (l *Lease) request(ctx context.Context, path string, in leaseRequest) error {
	var ans leaseAnswer
	if _, err := l.c.post(ctx, path, in, &ans); err != nil {
		return err
	}
	v, err := l.c.accept(ans.Verdict, l.licenceID, nil)
	if err != nil {
		return fmt.Errorf("lease answer: %w", err)
	}
	if _, err := CheckLeaseVerdict(ans.Verdict, l.c.product, l.c.machineID, l.c.now()); err != nil {
		return fmt.Errorf("lease answer: %w", err)
	}
	ends, err := v.ValidUntilTime()
	if err != nil || *v.LeaseID != ans.Lease.ID {
		return fmt.Errorf("lease answer: %w", ErrBadAnswer)
	}
	l.mu.Lock()
	l.raw, l.verdict, l.ends, l.err = ans.Verdict, v, ends, nil
	l.mu.Unlock()
	return nil
}

// renew renews the lease at half of what it has left, until Close. A
// lease the server no longer knows (ended while the network was down) is
// taken anew; any other failure keeps the lease until its end and tries
// again sooner.
func (l *Lease) renew() {
	defer close(l.done)
	for {
		now := l.c.now()
		l.mu.Lock()
		left, failed := l.ends.Sub(now), l.err != nil
		id := *l.verdict.LeaseID
		l.mu.Unlock()
		wait := left / 2
		if failed {
			wait = min(wait, leaseRetry)
		}
		select {
		case <-l.stop:
			return
		case <-l.c.after(max(wait, time.Second)):
		}
		ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
		err := l.request(ctx, pathLeaseRenew, leaseRequest{LicenceKey: l.key, MachineID: l.c.machineID, LeaseID: id})
		if e, ok := errors.AsType[*Error](err); ok && e.Status == http.StatusNotFound && e.Code == CodeLeaseNotFound {
			err = l.request(ctx, pathLease, leaseRequest{LicenceKey: l.key, MachineID: l.c.machineID})
		}
		cancel()
		if err != nil {
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
		}
	}
}

// Valid reports whether the lease's verdict holds now, offline: signed,
// of an active or trial licence, and the lease not past its end.
func (l *Lease) Valid() bool {
	l.mu.Lock()
	raw := l.raw
	l.mu.Unlock()
	_, err := CheckLeaseVerdict(raw, l.c.product, l.c.machineID, l.c.now())
	return err == nil
}

// Verdict is the lease's last verdict.
func (l *Lease) Verdict() Verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	return *l.verdict
}

// ExpiresAt is when the lease ends unless renewed.
func (l *Lease) ExpiresAt() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ends
}

// Err is the last renewal's failure, nil once a renewal succeeds.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close stops the renewals and gives the lease back, so another machine
// may take its place at once. It reports whether the server released a
// lease in use; when it cannot be reached, the place frees itself at the
// lease's end.
func (l *Lease) Close() (released bool, err error) {
	select {
	case <-l.stop:
		return false, nil // closed before
	default:
		close(l.stop)
	}
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	var ans leaseAnswer
	l.mu.Lock()
	id := *l.verdict.LeaseID
	l.mu.Unlock()
	if _, err := l.c.post(ctx, pathLeaseRelease, leaseRequest{LicenceKey: l.key, MachineID: l.c.machineID, LeaseID: id}, &ans); err != nil {
		return false, fmt.Errorf("release lease: %w", err)
	}
	return ans.Released, nil
}
