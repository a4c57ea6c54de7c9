package console

import (
	"fmt"

	"github.com/licentia/licentia/internal/admin"
)

// The chart's geometry, in SVG user units: a column per day holding one bar
// per series, under a top margin for the scale.
const (
	chartHeight = 160
	chartTop    = 12
	labelSpace  = 18
	columnWidth = 20
	barWidth    = 5
)

// chart is a bar chart drawn on the server as SVG: classes from the
// stylesheet colour it, so no inline style is needed and no script runs.
type chart struct {
	Width, Height int
	// Base is where bars stand, and LabelY where the day labels are.
	Base, LabelY int
	Max          int64
	Bars         []bar
	Ticks        []tick
	Days         []admin.DayActivity
}

type bar struct {
	Class      string
	X, Y, W, H int
	Title      string
}

type tick struct {
	X     int
	Label string
}

// series are the chart's bars in each day's column, left to right.
var series = []struct {
	class, label string
	value        func(admin.DayActivity) int64
}{
	{"issued", "licences issued", func(d admin.DayActivity) int64 { return d.Issued }},
	{"revoked", "licences revoked", func(d admin.DayActivity) int64 { return d.Revoked }},
	{"activated", "machines activated", func(d admin.DayActivity) int64 { return d.Activated }},
}

// newChart lays out days, scaled to the busiest day's tallest bar.
func newChart(days []admin.DayActivity) chart {
	c := chart{Width: len(days) * columnWidth, Height: chartTop + chartHeight + labelSpace, Base: chartTop + chartHeight,
		LabelY: chartTop + chartHeight + labelSpace - 4, Max: 1, Days: days}
	for _, d := range days {
		for _, sr := range series {
			c.Max = max(c.Max, sr.value(d))
		}
	}
	for i, d := range days {
		x := i*columnWidth + 2
		for j, sr := range series {
			n := sr.value(d)
			h := int(n * chartHeight / c.Max)
			if n > 0 && h == 0 {
				h = 1
			}
			c.Bars = append(c.Bars, bar{
				Class: sr.class, X: x + j*barWidth, Y: chartTop + chartHeight - h, W: barWidth, H: h,
				Title: fmt.Sprintf("%s: %d %s", d.Day.Format("2 Jan"), n, sr.label),
			})
		}
		if i%7 == len(days)%7 || i == len(days)-1 {
			c.Ticks = append(c.Ticks, tick{X: x, Label: d.Day.Format("2 Jan")})
		}
	}
	return c
}
