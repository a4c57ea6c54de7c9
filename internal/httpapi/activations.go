package httpapi

import (
	"net/http"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/ratelimit"
)

// public registers an activation route: no API key; the public rate limit
// (per client address and route), then 413; the handler answers the rest
// in the contract's order.
func (s *Server) public(pattern string, h handlerFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if !s.allow(w, r, ratelimit.Public, "addr:"+s.clientAddr(r)+"|"+pattern) {
			return
		}
		if !limitBody(w, r) {
			s.writeError(w, r, errTooLarge)
			return
		}
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// machineFields reads the licence key and machine id every activation body
// carries.
func machineFields(b *body, is *licentia.Issues) (key, machineID *string) {
	key, machineID = b.str("licence_key", true), b.str("machine_id", true)
	if key != nil && (*key == "" || utf8.RuneCountInString(*key) > 1024) {
		is.Add("/licence_key", "must be 1 to 1024 characters")
	}
	if machineID != nil {
		if msg := activation.CheckMachineID(*machineID); msg != "" {
			is.Add("/machine_id", "%s", msg)
		}
	}
	return key, machineID
}

type activatedAnswer struct {
	Activation events.Activation `json:"activation"`
	Verdict    string            `json:"verdict"`
}

func (s *Server) activate(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	readQuery(r, &is)
	b, err := readBody(r, &is, "licence_key", "machine_id", "label", "os", "app_version")
	if err != nil {
		return err
	}
	key, machineID := machineFields(b, &is)
	m := activation.Machine{}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"label", &m.Label}, {"os", &m.OS}, {"app_version", &m.AppVersion}} {
		if v := b.str(f.name, true); v != nil {
			if msg := activation.CheckMachineField(*v); msg != "" {
				is.Add("/"+f.name, "%s", msg)
			}
			*f.dst = *v
		}
	}
	if err := is.Err(); err != nil {
		return err
	}
	m.ID = *machineID
	res, err := s.activation.Activate(r.Context(), *key, m)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	writeJSON(w, status, activatedAnswer{Activation: events.ActivationOf(res.Activation), Verdict: res.Verdict})
	return nil
}

// keyAndMachine reads the body of /status and /deactivate:
// { licence_key, machine_id }.
func keyAndMachine(r *http.Request) (key, machineID string, err error) {
	var is licentia.Issues
	readQuery(r, &is)
	b, err := readBody(r, &is, "licence_key", "machine_id")
	if err != nil {
		return "", "", err
	}
	k, m := machineFields(b, &is)
	if err := is.Err(); err != nil {
		return "", "", err
	}
	return *k, *m, nil
}

func (s *Server) activationStatus(w http.ResponseWriter, r *http.Request) error {
	key, machineID, err := keyAndMachine(r)
	if err != nil {
		return err
	}
	verdict, err := s.activation.Status(r.Context(), key, machineID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"verdict": verdict})
	return nil
}

func (s *Server) deactivate(w http.ResponseWriter, r *http.Request) error {
	key, machineID, err := keyAndMachine(r)
	if err != nil {
		return err
	}
	changed, err := s.activation.Deactivate(r.Context(), key, machineID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"changed": changed})
	return nil
}
