package activation

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/sdk"
)

// OfflineActivate is the body of an offline activation: the request file
// an application wrote on a machine that never reaches the service. It is
// an activation's body with the file's format marker, which may be left
// out, so the same file and a hand-written body are both taken.
type OfflineActivate struct {
	licentia.Decoded
	Format     *string `json:"format"`
	LicenceKey *string `json:"licence_key" input:"required"`
	MachineID  *string `json:"machine_id" input:"required"`
	Label      *string `json:"label" input:"required"`
	OS         *string `json:"os" input:"required"`
	AppVersion *string `json:"app_version" input:"required"`
}

// activation is in as an activation's body. A format other than the one
// this service reads is one more issue, reported first with the rest.
func (in *OfflineActivate) activation() Activate {
	a := Activate{Decoded: in.Decoded, LicenceKey: in.LicenceKey, MachineID: in.MachineID,
		Label: in.Label, OS: in.OS, AppVersion: in.AppVersion}
	var is licentia.Issues
	is = append(is, licentia.CheckFields(in).Of("/format")...)
	is.CheckString("/format", in.Format, func(f string) string {
		if f != sdk.OfflineRequestFormat {
			return "must be " + sdk.OfflineRequestFormat
		}
		return ""
	})
	a.Before = append(slices.Clone(in.Before), is...)
	return a
}

// ActivateOffline takes a seat for a machine that cannot reach the
// service, from its request file: the same rules, order of checks and
// answer as Activate, which it runs.
func (s *Service) ActivateOffline(ctx context.Context, in OfflineActivate) (*Result, error) {
	return s.Activate(ctx, in.activation())
}

// ActivateOfflineFor runs an offline activation a customer uploads on a
// page of theirs (the customer portal): the same as ActivateOffline,
// audited as the customer rather than the application.
func (s *Service) ActivateOfflineFor(ctx context.Context, actor licentia.Actor, in OfflineActivate) (*Result, error) {
	return s.activate(ctx, actor, in.activation())
}

// offlineAnswer is the answer of POST /v1/activations/offline, which the
// application imports; a page that takes the request file offers the same
// document for download.
type offlineAnswer struct {
	Activation events.Activation `json:"activation"`
	Verdict    string            `json:"verdict"`
}

// AnswerFile is the document an offline activation's answer file holds:
// the API's answer, one line of JSON.
func (res *Result) AnswerFile() ([]byte, error) {
	out, err := json.Marshal(offlineAnswer{Activation: events.ActivationOf(res.Activation), Verdict: res.Verdict})
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
