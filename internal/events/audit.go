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
