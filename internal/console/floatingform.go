package console

import "github.com/licentia/licentia/internal/licentia"

// floatingForm is what the shared blocks of machine-use settings read:
// the page, the form they sit in, and the product or licence they edit,
// nil in a form that creates one (the fields then start empty or at the
// contract's defaults).
type floatingForm struct {
	*view
	Form    string
	Product *licentia.Product
	Licence *licentia.Licence
}

func productFloating(v *view, form string, p *licentia.Product) floatingForm {
	return floatingForm{view: v, Form: form, Product: p}
}

func licenceFloating(v *view, form string, l *licentia.Licence) floatingForm {
	return floatingForm{view: v, Form: form, Licence: l}
}
