package console

import (
	"net/http"
	"strings"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

type apiKeysPage struct {
	Keys []apiKeyRow
	// Created is set on the page that shows a new key, once.
	Created *createdKey
}

type apiKeyRow struct {
	Key  licentia.APIKey
	Live bool
}

type createdKey struct {
	Name   string
	Prefix string
	Secret string
}

// apiKeys lists the organization's API keys (never the keys themselves)
// and offers the create form: owners only.
func (s *Server) apiKeys(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.showAPIKeys(w, r, v, http.StatusOK, nil, nil)
}

func (s *Server) showAPIKeys(w http.ResponseWriter, r *http.Request, v *visit, status int, created *createdKey, p *problem) error {
	ks, err := s.admin.APIKeys(r.Context(), v.orgID())
	if err != nil {
		return err
	}
	now := s.admin.Now()
	page := apiKeysPage{Created: created}
	for _, k := range ks {
		page.Keys = append(page.Keys, apiKeyRow{Key: k, Live: k.IsLive(now)})
	}
	return s.render(w, r, status, "apikeys", &view{Title: "API keys", Section: "api-keys", Visit: v, Notice: notice(r), Data: page, problem: p})
}

// createAPIKey creates a key with the scopes chosen and an optional expiry.
// The key is shown on the answer to this post and never again: only its
// hash is kept.
func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request, v *visit) error {
	in := admin.NewAPIKey{Name: strings.TrimSpace(r.PostForm.Get("name"))}
	var is licentia.Issues
	for _, sc := range r.PostForm["scopes"] {
		in.Scopes = append(in.Scopes, licentia.Scope(sc))
	}
	if e := optional(r.PostForm, "expires_at"); e != nil {
		t, ok := parseFormTime(*e)
		if !ok {
			is.Add("/expires_at", "must be a date (2026-12-31) or a date and time (2026-12-31T23:59), in UTC")
		}
		in.ExpiresAt = &t
	}
	err := is.Err()
	var key *createdKey
	if err == nil {
		k, rec, cerr := s.admin.CreateAPIKey(r.Context(), v.actor(), v.orgID(), in)
		if err = cerr; err == nil {
			key = &createdKey{Name: rec.Name, Prefix: rec.Prefix, Secret: k.Reveal()}
		}
	}
	if p := refusal("create", r, err); p != nil {
		return s.showAPIKeys(w, r, v, http.StatusOK, nil, p)
	}
	if err != nil {
		return err
	}
	return s.showAPIKeys(w, r, v, http.StatusCreated, key, nil)
}

func (s *Server) revokeAPIKey(w http.ResponseWriter, r *http.Request, v *visit) error {
	changed, err := s.admin.RevokeAPIKey(r.Context(), v.actor(), v.orgID(), r.PathValue("id"))
	if err != nil {
		return err
	}
	done := "key-revoked"
	if !changed {
		done = "unchanged"
	}
	return seeOther(w, r, "/console/api-keys", done)
}
