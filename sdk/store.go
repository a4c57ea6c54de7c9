package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// RecordFormat is the version of the Record a Store keeps. A Client refuses
// a record of a newer format rather than misread it.
const RecordFormat = 1

// ErrNoRecord is what Store.Load returns before anything was saved.
var ErrNoRecord = errors.New("no licence record saved")

// Record is what a Client keeps between runs of the application: the
// licence key, the last verdict, and when to go online next. It holds the
// licence key, which is the customer's credential, so a Store keeps it
// readable by the user only.
type Record struct {
	Format     int    `json:"format"`
	LicenceKey string `json:"licence_key,omitempty"`
	// Machine describes this machine to the activation route; it is sent
	// again when an activation is retried.
	Machine Machine `json:"machine"`
	// Verdict is the last verdict accepted for this key on this machine.
	Verdict string `json:"verdict,omitempty"`
	// Activated is set once a verdict with a live seat for this key on this
	// machine was accepted: until then the application has not taken a seat.
	Activated bool `json:"activated,omitempty"`
	// CheckedAt is the last online check that brought a signed verdict, by
	// the Client's clock.
	CheckedAt time.Time `json:"checked_at,omitzero"`
	// Failures counts online attempts failed in a row; it sets the backoff.
	Failures int `json:"failures,omitempty"`
	// NextAttemptAt is the end of the backoff after a failure: Check makes no
	// request before it.
	NextAttemptAt time.Time `json:"next_attempt_at,omitzero"`
	// RateLimitedUntil is when a 429's Retry-After-public ends: no request
	// of any kind is sent before it.
	RateLimitedUntil time.Time `json:"rate_limited_until,omitzero"`
	// LastError is the error of the last online attempt, empty when it
	// succeeded.
	LastError string `json:"last_error,omitempty"`
	// Offline is the offline activation request written and not yet
	// answered: the key and machine its answer is imported for.
	Offline *PendingOffline `json:"offline,omitempty"`
	// HeartbeatInterval is the product's heartbeat interval in seconds, from
	// the answer that brought Verdict: Check goes online that often. 0 when
	// the product asks for no heartbeats.
	HeartbeatInterval int64 `json:"heartbeat_interval_seconds,omitempty"`
}

// Store keeps a Client's Record between runs. Load returns ErrNoRecord
// when nothing was saved yet.
type Store interface {
	Load() (*Record, error)
	Save(*Record) error
}

// FileStore returns a Store keeping the record as JSON in one file, mode
// 0600. Each Save writes a temporary file in the same directory and renames
// it over the old one, so a crash or a full disk leaves the previous record
// whole rather than a truncated one that would lose the last verdict.
func FileStore(path string) Store { return &fileStore{path: path} }

type fileStore struct{ path string }

func (s *fileStore) Load() (*Record, error) {
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoRecord
	}
	if err != nil {
		return nil, fmt.Errorf("load licence record: %w", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("load licence record %s: %w", s.path, err)
	}
	if r.Format > RecordFormat {
		return nil, fmt.Errorf("load licence record %s: format %d is newer than %d", s.path, r.Format, RecordFormat)
	}
	return &r, nil
}

func (s *fileStore) Save(r *Record) (err error) {
	out := *r
	out.Format = RecordFormat
	b, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("save licence record: %w", err)
	}
	dir := filepath.Dir(s.path)
	// CreateTemp makes the file with mode 0600, so the key is never
	// readable by others, not even for a moment.
	f, err := os.CreateTemp(dir, "."+filepath.Base(s.path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("save licence record: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("save licence record: %w", err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("save licence record: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("save licence record: %w", err)
	}
	if err = os.Rename(f.Name(), s.path); err != nil {
		return fmt.Errorf("save licence record: %w", err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes the rename durable where the system allows opening a
// directory for it; elsewhere (Windows) the rename is durable enough.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}
