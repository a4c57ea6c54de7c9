package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// OfflineRequestFormat marks an offline activation request file and the
// version of its layout. The server refuses a file of another format
// rather than misread it.
const OfflineRequestFormat = "licentia-offline-activation-request/1"

// MaxOfflineFile is the largest offline request or answer file read, in
// bytes: the server's limit on a request body.
const MaxOfflineFile = 65536

// ErrNoOfflineRequest is what ImportOfflineAnswer returns when no offline
// request was written on this machine, or its answer was imported already.
var ErrNoOfflineRequest = errors.New("no offline activation request pending")

// OfflineRequest is the file a machine that never reaches the licence
// server carries to one that does: the body of an activation, marked with
// its format. POST /v1/activations/offline, or the customer page, answers
// it with the activation answer the machine imports.
type OfflineRequest struct {
	Format     string `json:"format"`
	LicenceKey string `json:"licence_key"`
	MachineID  string `json:"machine_id"`
	Machine
}

// PendingOffline is an offline request written and not yet answered:
// the key and machine its answer is imported for.
type PendingOffline struct {
	LicenceKey string  `json:"licence_key"`
	Machine    Machine `json:"machine"`
}

// OfflineRequest returns the offline activation request of licenceKey on
// this machine, as JSON to write to a file, and keeps the key and machine
// in the record until the answer is imported. A key that fails offline
// verification is refused. The stored licence is left as it is: a working
// licence keeps running until an answer for the new key is imported.
func (c *Client) OfflineRequest(licenceKey string, m Machine) ([]byte, error) {
	c.op.Lock()
	defer c.op.Unlock()
	if _, err := c.verifier.VerifyLicenceKey(licenceKey); err != nil {
		return nil, fmt.Errorf("offline request: %w", err)
	}
	out, err := json.MarshalIndent(OfflineRequest{Format: OfflineRequestFormat, LicenceKey: licenceKey, MachineID: c.machineID, Machine: m}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("offline request: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rec.Offline = &PendingOffline{LicenceKey: licenceKey, Machine: m}
	if err := c.save(); err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// WriteOfflineRequest writes OfflineRequest's file at path, mode 0600: it
// holds the licence key.
func (c *Client) WriteOfflineRequest(path, licenceKey string, m Machine) error {
	out, err := c.OfflineRequest(licenceKey, m)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return fmt.Errorf("offline request: %w", err)
	}
	return nil
}

// ImportOfflineAnswer takes the answer to this machine's pending offline
// request, the JSON of POST /v1/activations/offline, and stores it as an
// online activation's answer would be: the verdict must verify with the
// product's public keys and name this machine, the pending request's
// licence and the activation answered; anything else is refused and the
// stored licence stays as it was. Imported, the answer counts as a
// successful check.
func (c *Client) ImportOfflineAnswer(answer []byte) (*Activation, error) {
	c.op.Lock()
	defer c.op.Unlock()
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.rec.Offline
	if p == nil {
		return nil, ErrNoOfflineRequest
	}
	k, err := c.verifier.VerifyLicenceKey(p.LicenceKey)
	if err != nil {
		return nil, fmt.Errorf("import offline answer: %w", err)
	}
	ans, err := readOfflineAnswer(answer)
	if err != nil {
		return nil, fmt.Errorf("import offline answer: %w", err)
	}
	same := c.keyOK && c.licenceID == k.LicenceID
	var held *Verdict
	if same {
		held = c.verdict
	}
	v, err := c.accept(ans.Verdict, k.LicenceID, held)
	if err != nil {
		return nil, fmt.Errorf("import offline answer: %w", err)
	}
	a := ans.Activation
	if v.ActivationID == nil || *v.ActivationID != a.ID || a.MachineID != c.machineID || a.LicenceID != k.LicenceID {
		return nil, fmt.Errorf("import offline answer: %w", ErrVerdictMismatch)
	}
	if !same {
		// A new licence: its record starts afresh, as an online
		// activation of another key does.
		c.rec = Record{RateLimitedUntil: c.rec.RateLimitedUntil}
		c.verdict, c.lastErr = nil, nil
		c.keyOK, c.licenceID = true, k.LicenceID
	}
	c.rec.LicenceKey, c.rec.Machine, c.rec.Offline = p.LicenceKey, p.Machine, nil
	c.note(now, attempt{raw: ans.Verdict, verdict: v, activation: &a})
	c.refused = nil
	return &a, c.save()
}

// ImportOfflineAnswerFile reads the answer file at path, at most
// MaxOfflineFile bytes, and imports it with ImportOfflineAnswer.
func (c *Client) ImportOfflineAnswerFile(path string) (*Activation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("import offline answer: %w", err)
	}
	defer f.Close()
	answer, err := io.ReadAll(io.LimitReader(f, MaxOfflineFile+1))
	if err != nil {
		return nil, fmt.Errorf("import offline answer: %w", err)
	}
	return c.ImportOfflineAnswer(answer)
}

// readOfflineAnswer reads an activation answer: one JSON object, at most
// MaxOfflineFile bytes, with a verdict. Fields the SDK does not know are
// ignored, as in an online answer.
func readOfflineAnswer(raw []byte) (*activateAnswer, error) {
	if len(raw) > MaxOfflineFile {
		return nil, fmt.Errorf("%w: over %d bytes", ErrBadAnswer, MaxOfflineFile)
	}
	var ans activateAnswer
	d := json.NewDecoder(bytes.NewReader(raw))
	if err := d.Decode(&ans); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadAnswer, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: data after the answer", ErrBadAnswer)
	}
	if ans.Verdict == "" {
		return nil, fmt.Errorf("%w: no verdict", ErrBadAnswer)
	}
	return &ans, nil
}
