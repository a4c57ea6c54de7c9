package console

import (
	"fmt"

	"github.com/licentia/licentia/internal/admin"
)

// The chart's geometry, in SVG user units: a left margin for the scale's
// numbers, then a column per day holding one bar per series, under a top
// margin so the top number is not cut.
const (
	chartHeight = 160
	chartTop    = 12
	chartLeft   = 30
	labelSpace  = 18
	columnWidth = 20
	barWidth    = 5
	// scaleSteps is how many gridlines stand above the base line.
	scaleSteps = 4
)

// chart is a bar chart drawn on the server as SVG: classes from the
// stylesheet colour it, so no inline style is needed and no script runs.
type chart struct {
	Width, Height int
	// Left is where the days start, Base where bars stand, and LabelY
	// where the day labels are.
	Left, Base, LabelY int
	// Max is the top of the scale, a round number at or above the busiest
	// day's tallest bar.
	Max   int64
	Bars  []bar
	Ticks []tick
	Scale []gridline
	// Totals are each series' sum over the days, for the caption and the
	// text a screen reader reads.
	Issued, Revoked, Activated int64
	Days                       []admin.DayActivity
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

// gridline is one number of the scale and its line across the chart.
type gridline struct {
	Y     int
	Value int64
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

// newChart lays out days on a scale from 0 to a round number at or above
// the busiest day's tallest bar.
func newChart(days []admin.DayActivity) chart {
	c := chart{Width: chartLeft + len(days)*columnWidth, Height: chartTop + chartHeight + labelSpace, Left: chartLeft,
		Base: chartTop + chartHeight, LabelY: chartTop + chartHeight + labelSpace - 4, Days: days}
	var busiest int64
	for _, d := range days {
		for _, sr := range series {
			busiest = max(busiest, sr.value(d))
		}
		c.Issued, c.Revoked, c.Activated = c.Issued+d.Issued, c.Revoked+d.Revoked, c.Activated+d.Activated
	}
	step := scaleStep(busiest)
	c.Max = step * scaleSteps
	for i := range scaleSteps + 1 {
		v := step * int64(i)
		c.Scale = append(c.Scale, gridline{Y: c.Base - int(v*chartHeight/c.Max), Value: v})
	}
	for i, d := range days {
		x := chartLeft + i*columnWidth + 2
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

// scaleStep is the distance between the scale's gridlines: the smallest of
// 1, 2, 5, 10, 20, 50... whose scaleSteps steps reach busiest, so every
// number on the scale is round.
func scaleStep(busiest int64) int64 {
	for unit := int64(1); ; unit *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if unit*m*scaleSteps >= busiest {
				return unit * m
			}
		}
	}
}
