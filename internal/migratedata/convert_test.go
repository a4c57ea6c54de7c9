package migratedata

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

func TestConvert(t *testing.T) {
	id := "0b7a6f9e-3c1d-4e8f-9a2b-5c6d7e8f9a0b"
	var u pgtype.UUID
	if err := u.Scan(id); err != nil {
		t.Fatal(err)
	}
	ok := []struct {
		kind kind
		in   any
		want any
	}{
		{kindText, "café", "café"},
		{kindText, []byte("raw"), "raw"},
		{kindUUID, id, u},
		{kindTime, int64(1764201600123), time.Date(2025, 11, 27, 0, 0, 0, 123e6, time.UTC)},
		{kindBool, int64(0), false},
		{kindBool, int64(1), true},
		{kindInt, int64(-7), int64(-7)},
		{kindRowID, int64(42), int64(42)},
		{kindBytes, []byte{0, 1, 2}, []byte{0, 1, 2}},
		{kindBytes, "text", []byte("text")},
		{kindTime, nil, nil},
	}
	for _, tc := range ok {
		got, err := convert(tc.kind, tc.in)
		if err != nil {
			t.Errorf("convert(%v, %#v) error = %v", tc.kind, tc.in, err)
			continue
		}
		if g, ok := got.([]byte); ok {
			if string(g) != string(tc.want.([]byte)) {
				t.Errorf("convert(%v, %#v) = %#v, want %#v", tc.kind, tc.in, got, tc.want)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("convert(%v, %#v) = %#v, want %#v", tc.kind, tc.in, got, tc.want)
		}
	}
	// A value of a type the column never holds stops the copy rather than
	// being guessed at.
	for _, tc := range []struct {
		kind kind
		in   any
	}{
		{kindBool, int64(2)}, {kindBool, "true"}, {kindTime, "2026-01-01"}, {kindTime, 1.5},
		{kindUUID, "not-a-uuid"}, {kindUUID, int64(1)}, {kindInt, "12"}, {kindText, int64(3)}, {kindBytes, int64(1)},
	} {
		if got, err := convert(tc.kind, tc.in); err == nil {
			t.Errorf("convert(%v, %#v) = %#v, want an error", tc.kind, tc.in, got)
		}
	}
}

func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		udt, lite string
		want      kind
	}{{"text", "TEXT", kindText}, {"uuid", "text", kindUUID}, {"timestamptz", "INTEGER", kindTime},
		{"bool", "INTEGER", kindBool}, {"int8", "INTEGER", kindInt}, {"bytea", "BLOB", kindBytes}} {
		if got, err := kindOf(tc.udt, tc.lite); err != nil || got != tc.want {
			t.Errorf("kindOf(%s, %s) = %v, %v, want %v", tc.udt, tc.lite, got, err, tc.want)
		}
	}
	for _, tc := range [][2]string{{"timestamptz", "TEXT"}, {"jsonb", "TEXT"}, {"uuid", "BLOB"}} {
		if _, err := kindOf(tc[0], tc[1]); err == nil {
			t.Errorf("kindOf(%s, %s) error = nil, want one", tc[0], tc[1])
		}
	}
}
