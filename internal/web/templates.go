package web

import (
	"fmt"
	"html/template"
	"io/fs"
	"path"
	"strings"
)

// ParsePages parses each page of files' templates/*.html with
// templates/layout.html and funcs, by page name (the file's name without
// .html); door names the front door in errors.
func ParsePages(files fs.FS, funcs template.FuncMap, door string) (map[string]*template.Template, error) {
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, name := range names {
		base := strings.TrimSuffix(path.Base(name), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(files, "templates/layout.html", name)
		if err != nil {
			return nil, fmt.Errorf("parse %s page %s: %w", door, base, err)
		}
		out[base] = t
	}
	return out, nil
}
