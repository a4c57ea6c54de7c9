package console

import (
	"encoding/hex"
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

type productsPage struct {
	Products []*admin.ProductView
}

// products lists the organization's products and offers the create form.
func (s *Server) products(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.showProducts(w, r, v, nil)
}

func (s *Server) showProducts(w http.ResponseWriter, r *http.Request, v *visit, p *problem) error {
	ps, err := s.admin.Products(r.Context(), v.orgID())
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "products", &view{Title: "Products", Section: "products", Visit: v, Notice: notice(r),
		Data: productsPage{Products: ps}, problem: p})
}

func (s *Server) createProduct(w http.ResponseWriter, r *http.Request, v *visit) error {
	var in admin.NewProduct
	decodeForm(r.PostForm, &in)
	pv, err := s.admin.CreateProduct(r.Context(), v.actor(), v.orgID(), in)
	if p := refusal("create", r, err); p != nil {
		return s.showProducts(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/products/"+pv.Product.ID, "product-created")
}

type productPage struct {
	View     *admin.ProductView
	Keys     []productKey
	Features []licentia.Feature
}

type productKey struct {
	PublicKey string
	Status    string
	Created   string
	Retired   string
}

// product shows a product, its signing keys, and the forms that edit it,
// rotate its signing key and retire an old public key.
func (s *Server) product(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.showProduct(w, r, v, nil)
}

func (s *Server) showProduct(w http.ResponseWriter, r *http.Request, v *visit, p *problem) error {
	pv, err := s.admin.Product(r.Context(), v.orgID(), r.PathValue("id"))
	if err != nil {
		return err
	}
	page := productPage{View: pv}
	if page.Features, err = s.admin.Features(r.Context(), v.orgID(), pv.Product.ID); err != nil {
		return err
	}
	if p != nil {
		p.Form = featureRowForm(p.Form, page.Features)
	}
	for i := len(pv.Product.Keys) - 1; i >= 0; i-- {
		k := pv.Product.Keys[i]
		page.Keys = append(page.Keys, productKey{PublicKey: hex.EncodeToString(k.PublicKey), Status: string(k.Status),
			Created: formatTime(k.CreatedAt), Retired: formatTimePtr(k.RetiredAt, "")})
	}
	return s.render(w, r, http.StatusOK, "product", &view{Title: pv.Product.Name, Section: "products", Visit: v, Notice: notice(r),
		Data: page, problem: p})
}

func (s *Server) updateProduct(w http.ResponseWriter, r *http.Request, v *visit) error {
	var in admin.ProductPatch
	decodeForm(r.PostForm, &in)
	pv, err := s.admin.UpdateProduct(r.Context(), v.actor(), v.orgID(), r.PathValue("id"), in)
	if p := refusal("edit", r, err); p != nil {
		return s.showProduct(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/products/"+pv.Product.ID, "product-updated")
}

func (s *Server) rotateSigningKey(w http.ResponseWriter, r *http.Request, v *visit) error {
	var in admin.RotateKey
	decodeForm(r.PostForm, &in)
	pv, err := s.admin.RotateSigningKey(r.Context(), v.actor(), v.orgID(), r.PathValue("id"), in)
	if p := refusal("rotate", r, err); p != nil {
		return s.showProduct(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/products/"+pv.Product.ID, "rotated")
}

func (s *Server) retirePublicKey(w http.ResponseWriter, r *http.Request, v *visit) error {
	var in admin.RetireKey
	decodeForm(r.PostForm, &in)
	pv, err := s.admin.RetirePublicKey(r.Context(), v.actor(), v.orgID(), r.PathValue("id"), in)
	if p := refusal("retire", r, err); p != nil {
		return s.showProduct(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/products/"+pv.Product.ID, "retired")
}
