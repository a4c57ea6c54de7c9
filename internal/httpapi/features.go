package httpapi

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

// featureJSON is a product's feature as the API shows it.
type featureJSON struct {
	Code      string `json:"code"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
}

func toFeatureJSON(f *licentia.Feature) featureJSON {
	return featureJSON{Code: f.Code, Name: f.Name, CreatedAt: licentia.FormatTime(f.CreatedAt)}
}

// pathFeatureCode reads a feature code path value; the operation reports
// a malformed one at path.code, in its order of checks.
func pathFeatureCode(r *http.Request) string { return r.PathValue("code") }

func (s *Server) listFeatures(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathProductID(r, &is)
	web.ReadQuery(r, &is)
	if err := is.Err(); err != nil {
		return err
	}
	fs, err := s.admin.Features(r.Context(), callerOf(r).OrgID, id)
	if err != nil {
		return err
	}
	out := make([]featureJSON, len(fs))
	for i := range fs {
		out[i] = toFeatureJSON(&fs[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"features": out})
	return nil
}

func (s *Server) putFeature(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathProductID(r, &is)
	var in admin.FeatureSave
	if err := web.Decode(r, is, &in); err != nil {
		return err
	}
	c := callerOf(r)
	f, err := s.admin.SaveFeature(r.Context(), c.Actor, c.OrgID, id, pathFeatureCode(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"feature": toFeatureJSON(f)})
	return nil
}

func (s *Server) deleteFeature(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathProductID(r, &is)
	var in admin.FeatureDelete
	if err := web.Decode(r, is, &in); err != nil {
		return err
	}
	c := callerOf(r)
	if err := s.admin.DeleteFeature(r.Context(), c.Actor, c.OrgID, id, pathFeatureCode(r), in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
