package httpapi

import (
	"time"

	"encoding/hex"
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
	"github.com/licentia/licentia/sdk"
)

type productJSON struct {
	ID                   string           `json:"id"`
	Name                 string           `json:"name"`
	KeyPrefix            string           `json:"key_prefix"`
	CurrentMajor         int64            `json:"current_major"`
	MachinesPerSeat      int64            `json:"machines_per_seat"`
	LicenceSigningDomain string           `json:"licence_signing_domain"`
	VerdictSigningDomain string           `json:"verdict_signing_domain"`
	PublicKey            string           `json:"public_key"`
	PreviousPublicKeys   []string         `json:"previous_public_keys"`
	SigningKeyStatus     string           `json:"signing_key_status"`
	KeyHistory           []keyHistoryJSON `json:"key_history"`
	CreatedAt            string           `json:"created_at"`
	UpdatedAt            string           `json:"updated_at"`
	// HeartbeatIntervalSeconds is null when heartbeat leases are off.
	HeartbeatIntervalSeconds *int64 `json:"heartbeat_interval_seconds"`
	MachineMatch             string `json:"machine_match"`
	TransfersPer30Days       int64  `json:"transfers_per_30_days"`
	// MaxConcurrent is null when the count of machines in use is off.
	MaxConcurrent   *int64 `json:"max_concurrent"`
	LeaseTTLSeconds int64  `json:"lease_ttl_seconds"`
	MaxBorrowHours  int64  `json:"max_borrow_hours"`
}

type keyHistoryJSON struct {
	PublicKey   string             `json:"public_key"`
	Fingerprint string             `json:"fingerprint"`
	Status      licentia.KeyStatus `json:"status"`
	CreatedAt   string             `json:"created_at"`
	RetiredAt   *string            `json:"retired_at"`
}

// toProductJSON shows a product. The signing domains show their effective
// value: the product's own, or the format's default.
func toProductJSON(v *admin.ProductView) productJSON {
	p := v.Product
	out := productJSON{
		ID: p.ID, Name: p.Name, KeyPrefix: p.KeyPrefix, CurrentMajor: p.CurrentMajor, MachinesPerSeat: p.MachinesPerSeat,
		LicenceSigningDomain:     orDefault(p.LicenceSigningDomain, sdk.DefaultLicenceDomain),
		VerdictSigningDomain:     orDefault(p.VerdictSigningDomain, sdk.DefaultVerdictDomain),
		PreviousPublicKeys:       []string{},
		SigningKeyStatus:         v.SigningKeyStatus,
		KeyHistory:               make([]keyHistoryJSON, len(p.Keys)),
		CreatedAt:                licentia.FormatTime(p.CreatedAt),
		UpdatedAt:                licentia.FormatTime(p.UpdatedAt),
		HeartbeatIntervalSeconds: p.HeartbeatIntervalSeconds,
		MachineMatch:             orDefault(string(p.MachineMatch), string(licentia.MatchExact)),
		TransfersPer30Days:       p.TransfersPer30Days,
		MaxConcurrent:            p.MaxConcurrent,
		LeaseTTLSeconds:          int64(p.LeaseTTL() / time.Second),
		MaxBorrowHours:           p.MaxBorrowHours,
	}
	for i, k := range p.Keys {
		pub := hex.EncodeToString(k.PublicKey)
		switch k.Status {
		case licentia.KeyCurrent:
			out.PublicKey = pub
		case licentia.KeyPrevious:
			out.PreviousPublicKeys = append(out.PreviousPublicKeys, pub)
		}
		out.KeyHistory[i] = keyHistoryJSON{PublicKey: pub, Fingerprint: k.Fingerprint, Status: k.Status,
			CreatedAt: licentia.FormatTime(k.CreatedAt), RetiredAt: licentia.FormatTimePtr(k.RetiredAt)}
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

type productAnswer struct {
	Product productJSON `json:"product"`
}

func (s *Server) listProducts(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	web.ReadQuery(r, &is)
	if err := is.Err(); err != nil {
		return err
	}
	views, err := s.admin.Products(r.Context(), callerOf(r).OrgID)
	if err != nil {
		return err
	}
	out := make([]productJSON, len(views))
	for i, v := range views {
		out[i] = toProductJSON(v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"products": out})
	return nil
}

// pathProductID reads a product id path value by the product id rule.
func pathProductID(r *http.Request, issues *licentia.Issues) string {
	id := r.PathValue("id")
	if msg := licentia.CheckProductID(id); msg != "" {
		issues.Add("path.id", "%s", msg)
	}
	return id
}

func (s *Server) getProduct(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathProductID(r, &is)
	web.ReadQuery(r, &is)
	if err := is.Err(); err != nil {
		return err
	}
	v, err := s.admin.Product(r.Context(), callerOf(r).OrgID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, productAnswer{Product: toProductJSON(v)})
	return nil
}

func (s *Server) createProduct(w http.ResponseWriter, r *http.Request) error {
	var in admin.NewProduct
	if err := web.Decode(r, nil, &in); err != nil {
		return err
	}
	v, err := s.admin.CreateProduct(r.Context(), callerOf(r).Actor, callerOf(r).OrgID, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, productAnswer{Product: toProductJSON(v)})
	return nil
}

func (s *Server) patchProduct(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathProductID(r, &is)
	var in admin.ProductPatch
	if err := web.Decode(r, is, &in); err != nil {
		return err
	}
	v, err := s.admin.UpdateProduct(r.Context(), callerOf(r).Actor, callerOf(r).OrgID, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, productAnswer{Product: toProductJSON(v)})
	return nil
}

func (s *Server) rotateSigningKey(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathProductID(r, &is)
	var in admin.RotateKey
	if err := web.Decode(r, is, &in); err != nil {
		return err
	}
	v, err := s.admin.RotateSigningKey(r.Context(), callerOf(r).Actor, callerOf(r).OrgID, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, productAnswer{Product: toProductJSON(v)})
	return nil
}

func (s *Server) retirePublicKey(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathProductID(r, &is)
	var in admin.RetireKey
	if err := web.Decode(r, is, &in); err != nil {
		return err
	}
	v, err := s.admin.RetirePublicKey(r.Context(), callerOf(r).Actor, callerOf(r).OrgID, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, productAnswer{Product: toProductJSON(v)})
	return nil
}
