package console

import (
	"fmt"
	"html/template"
	"strings"
)

// plural writes a count with its noun, singular for one: "1 seat",
// "2 seats", "0 machines". Every page counts with it, so none reads
// "1 seats".
func plural(n any, one, many string) string {
	c := fmt.Sprint(n)
	if c == "1" || c == "-1" {
		return c + " " + one
	}
	return c + " " + many
}

// counted writes a count of a limit kind ("seats", "machines") with the
// noun matching the count.
func counted(n any, kind any) string {
	many := fmt.Sprint(kind)
	return plural(n, strings.TrimSuffix(many, "s"), many)
}

// shortIDLength is how much of a long id a table shows; the whole id is in
// the cell's title and on the page where the id matters.
const shortIDLength = 12

// shortID shortens a long id for a table cell, marking the cut.
func shortID(id string) string {
	if len([]rune(id)) <= shortIDLength+2 {
		return id
	}
	return string([]rune(id)[:shortIDLength]) + "…"
}

// dotted writes a dotted name ("activation.created") with a line break
// allowed after each dot, so a narrow column breaks it there, not inside a
// word.
func dotted(name any) template.HTML {
	parts := strings.Split(fmt.Sprint(name), ".")
	for i, p := range parts {
		parts[i] = template.HTMLEscapeString(p)
	}
	return template.HTML(strings.Join(parts, ".<wbr>"))
}
