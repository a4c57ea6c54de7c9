package events

import (
	"context"
	"encoding/json"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// Audit appends an audit entry with data in tx, so it commits with the
// change it records.
func Audit(ctx context.Context, tx store.Tx, e licentia.AuditEntry, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	e.ID, e.Data = licentia.NewID(), raw
	return tx.AppendAudit(ctx, &e)
}

// Record writes a licence change's audit entry (in the licence's log) and
// its event in tx. a is the activation of activation events, else nil.
func Record(ctx context.Context, tx store.Tx, actor licentia.Actor, l *licentia.Licence, a *licentia.Activation,
	action string, typ licentia.EventType, at time.Time, data any) error {
	e := licentia.AuditEntry{OrgID: l.OrgID, LicenceID: &l.ID, Action: action, Actor: actor, At: at}
	if err := Audit(ctx, tx, e, data); err != nil {
		return err
	}
	_, err := Write(ctx, tx, typ, at, l, a)
	return err
}

// ActivationData is the audit data of an activation change.
func ActivationData(l *licentia.Licence, a *licentia.Activation) map[string]any {
	return map[string]any{"licence_id": l.ID, "activation_id": a.ID, "machine_id": a.MachineID}
}

// Note is what an activation change says beyond its snapshots, in its
// audit data and its event's data; empty fields are left out.
type Note struct {
	// PreviousMachineID is the machine id a rebinding moved from.
	PreviousMachineID string
	// Reason says why the service freed an activation: ReasonTransfer.
	Reason string
}

// ReasonTransfer is the reason of an activation freed by a transfer.
const ReasonTransfer = "transfer"

// RecordActivation is Record for an activation change with a note: the
// audit data is ActivationData with the note's fields.
func RecordActivation(ctx context.Context, tx store.Tx, actor licentia.Actor, l *licentia.Licence, a *licentia.Activation,
	action string, typ licentia.EventType, at time.Time, n Note) error {
	d := ActivationData(l, a)
	if n.PreviousMachineID != "" {
		d["previous_machine_id"] = n.PreviousMachineID
	}
	if n.Reason != "" {
		d["reason"] = n.Reason
	}
	e := licentia.AuditEntry{OrgID: l.OrgID, LicenceID: &l.ID, Action: action, Actor: actor, At: at}
	if err := Audit(ctx, tx, e, d); err != nil {
		return err
	}
	_, err := writeNoted(ctx, tx, typ, at, l, a, n)
	return err
}
