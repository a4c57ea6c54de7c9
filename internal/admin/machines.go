package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// RenameMachine is the body of a machine's rename: its new label, 1 to 200
// characters, no control characters.
type RenameMachine struct {
	licentia.Decoded
	Label *string `json:"label" input:"required"`
}

// Validate reports every problem of a rename.
func (in *RenameMachine) Validate() licentia.Issues {
	is := append(slices.Clone(in.Before), licentia.CheckFields(in)...)
	is.CheckString("/label", in.Label, func(s string) string {
		if strings.TrimSpace(s) == "" {
			return "must not be empty"
		}
		return activation.CheckMachineField(s)
	})
	return is
}

// RenameActivation changes the label of a live machine, so its owner can
// tell their computers apart. Another organization's activation, or one
// freed, answers not_found like a missing one. The same label changes
// nothing and writes nothing. The change is audited on the licence
// (activation.renamed, with the old and new labels); no event type
// describes it, so none is written. The application's next activation
// from that machine sends its own label again.
func (s *Service) RenameActivation(ctx context.Context, actor licentia.Actor, orgID, id string, in RenameMachine) (*ActivationChange, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	now := s.now()
	var out ActivationChange
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		out = ActivationChange{}
		a, err := tx.Activation(ctx, orgID, id)
		if err != nil {
			return err
		}
		l, err := tx.LockLicence(ctx, orgID, a.LicenceID)
		if err != nil {
			return err
		}
		if a, err = tx.Activation(ctx, orgID, id); err != nil {
			return err
		}
		if !a.IsLive() {
			return store.NotFound(licentia.CodeNotFound, "Activation")
		}
		out.Activation = a
		if a.Label == *in.Label {
			return nil
		}
		from := a.Label
		a.Label = *in.Label
		if err := tx.TouchActivation(ctx, a); err != nil {
			return err
		}
		out.Changed = true
		data := events.ActivationData(l, a)
		data["from"], data["to"] = from, a.Label
		e := licentia.AuditEntry{OrgID: orgID, LicenceID: &l.ID, Action: licentia.AuditActivationRenamed, Actor: actor, At: now}
		return events.Audit(ctx, tx, e, data)
	})
	if err != nil {
		return nil, fmt.Errorf("rename activation %s: %w", id, err)
	}
	return &out, nil
}
