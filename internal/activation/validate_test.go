package activation_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/licentia"
)

// TestOperationsValidate: the licence-key length, the machine id and the
// label, os and app_version rules are the activation operations'. Called
// directly, without HTTP, each refuses what the API refuses, with
// validation_failed and the same issue paths and messages, before it
// verifies the key or reads anything (the service here has no store).
func TestOperationsValidate(t *testing.T) {
	svc := activation.New(activation.Options{})
	const machineRule = "must be 1 to 128 of A-Z a-z 0-9 . _ : -"
	act := func(edit func(*activation.Activate)) func(context.Context) error {
		in := activate("DESK-KEY", machine("ada-laptop"))
		edit(&in)
		return func(ctx context.Context) error { _, err := svc.Activate(ctx, in); return err }
	}
	status := func(key, machineID string) func(context.Context) error {
		return func(ctx context.Context) error { _, err := svc.Status(ctx, seat(key, machineID)); return err }
	}
	deactivate := func(key, machineID string) func(context.Context) error {
		return func(ctx context.Context) error { _, err := svc.Deactivate(ctx, seat(key, machineID)); return err }
	}
	for _, tt := range []struct {
		name string
		call func(context.Context) error
		want licentia.Issues
	}{
		{"activate: empty key", act(func(in *activation.Activate) { in.LicenceKey = ptr("") }),
			licentia.Issues{{Path: "/licence_key", Message: "must be 1 to 1024 characters"}}},
		{"activate: key too long", act(func(in *activation.Activate) { in.LicenceKey = ptr(strings.Repeat("K", 1025)) }),
			licentia.Issues{{Path: "/licence_key", Message: "must be 1 to 1024 characters"}}},
		{"activate: machine id", act(func(in *activation.Activate) { in.MachineID = ptr("ada laptop") }),
			licentia.Issues{{Path: "/machine_id", Message: machineRule}}},
		{"activate: label too long", act(func(in *activation.Activate) { in.Label = ptr(strings.Repeat("l", 201)) }),
			licentia.Issues{{Path: "/label", Message: "must be at most 200 characters"}}},
		{"activate: os with a control character", act(func(in *activation.Activate) { in.OS = ptr("linux\u0007") }),
			licentia.Issues{{Path: "/os", Message: "must not contain control characters"}}},
		{"activate: app_version missing", act(func(in *activation.Activate) { in.AppVersion = nil }),
			licentia.Issues{{Path: "/app_version", Message: "is required"}}},
		{"activate: every problem, in the API's order", act(func(in *activation.Activate) {
			*in = activation.Activate{LicenceKey: ptr(""), MachineID: ptr("a/b"), Label: ptr(strings.Repeat("l", 201)), OS: ptr("linux")}
		}), licentia.Issues{
			{Path: "/licence_key", Message: "must be 1 to 1024 characters"}, {Path: "/machine_id", Message: machineRule},
			{Path: "/label", Message: "must be at most 200 characters"}, {Path: "/app_version", Message: "is required"},
		}},
		{"status: empty key", status("", "ada-laptop"), licentia.Issues{{Path: "/licence_key", Message: "must be 1 to 1024 characters"}}},
		{"status: machine id", status("DESK-KEY", strings.Repeat("m", 129)), licentia.Issues{{Path: "/machine_id", Message: machineRule}}},
		{"deactivate: key too long", deactivate(strings.Repeat("K", 1025), "ada-laptop"),
			licentia.Issues{{Path: "/licence_key", Message: "must be 1 to 1024 characters"}}},
		{"deactivate: machine id", deactivate("DESK-KEY", ""), licentia.Issues{{Path: "/machine_id", Message: machineRule}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(t.Context())
			e, ok := errors.AsType[*licentia.Error](err)
			if !ok || e.Code != licentia.CodeValidationFailed {
				t.Fatalf("error = %v, want validation_failed", err)
			}
			if diff := cmp.Diff(tt.want, licentia.Issues(e.Details["issues"].([]licentia.Issue))); diff != "" {
				t.Errorf("issues (-want +got):\n%s", diff)
			}
		})
	}
}
