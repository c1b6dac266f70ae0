package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/clipfold/clipfold/internal/benchdata/compare"
)

type series struct {
	name   string
	color  string
	dash   string
	points [][2]float64 // messages, ms
}

// series are split's time per call in every host, per build.
func (r *report) series() []series {
	tiny, std := r.build("TinyGo"), r.build("Go")
	points := func(get func(n int) (float64, bool)) [][2]float64 {
		var p [][2]float64
		for _, n := range compare.Sizes {
			if v, ok := get(n); ok && v > 0 {
				p = append(p, [2]float64{float64(n), v})
			}
		}
		return p
	}
	goHost := func(b *build, kind string) func(int) (float64, bool) {
		return func(n int) (float64, bool) { return b.goMs("split", kind, n) }
	}
	host := func(h *hostRun, key string) func(int) (float64, bool) {
		return func(n int) (float64, bool) { return h.ms("split", n, key) }
	}
	return []series{
		{"TinyGo, Go host", "#6a3d9a", "", points(goHost(tiny, "wasm"))},
		{"TinyGo, Node", "#ff7f00", "", points(host(tiny.Node, "raw_ms"))},
		{"TinyGo, Python SDK", "#33a02c", "", points(host(tiny.Py, "median_ms"))},
		{"TinyGo, Go SDK", "#6a3d9a", "2 3", points(goHost(tiny, "wasm-extism"))},
		{"Go build, Go host", "#1f78b4", "7 4", points(goHost(std, "wasm"))},
		{"native Go", "#777777", "1 3", points(func(n int) (float64, bool) { return r.native("split", n) })},
	}
}

// chart draws split's time per call against history size (log–log), one
// line per host and build, with the 10k targets marked.
func (r *report) chart() string {
	const W, H = 900, 520
	const x0, y0, pw, ph = 80.0, 60.0, 560.0, 380.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	load := "?"
	if t := r.build("TinyGo"); t.Go != nil {
		load = t.Go.LoadBefore
	}
	fmt.Fprintf(&b, `<text x="%d" y="24" text-anchor="middle" font-size="15">clipfold split: time per call vs history size (median, log–log)</text>`+"\n", W/2)
	fmt.Fprintf(&b, `<text x="%d" y="42" text-anchor="middle" fill="#555">%s, %d cores, load %s; %s</text>`+"\n", W/2, esc(r.CPU), r.NProc, esc(load), r.Date.Format("2006-01-02"))

	ss := r.series()
	minY, maxY := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.points {
			minY, maxY = math.Min(minY, p[1]), math.Max(maxY, p[1])
		}
	}
	if math.IsInf(minY, 0) {
		minY, maxY = 0.01, 1000
	}
	lo := math.Pow(10, math.Floor(math.Log10(minY)))
	hi := math.Pow(10, math.Ceil(math.Log10(math.Max(maxY, tsRefMs))))
	xlo, xhi := 50.0, 200_000.0
	px := func(n float64) float64 {
		return x0 + pw*(math.Log10(n)-math.Log10(xlo))/(math.Log10(xhi)-math.Log10(xlo))
	}
	py := func(ms float64) float64 {
		return y0 + ph - ph*(math.Log10(ms)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))
	}

	// Axes and grid.
	fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", x0, y0, pw, ph)
	for v := lo; v <= hi*1.001; v *= 10 {
		y := py(v)
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#e5e5e5"/><text x="%.0f" y="%.1f" text-anchor="end">%s ms</text>`+"\n", x0, y, x0+pw, y, x0-6, y+4, f(v))
	}
	for _, n := range compare.Sizes {
		x := px(float64(n))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#e5e5e5"/><text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", x, y0, x, y0+ph, x, y0+ph+16, commas(int64(n)))
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">messages in the history (about 406 bytes of JSON each)</text>`+"\n", x0+pw/2, y0+ph+36)

	// The targets at 10k.
	for _, t := range []struct {
		ms    float64
		label string
	}{{targetSplit10kGo, "Go host target"}, {targetSplit10kNode, "Node target"}, {targetSplit10kPlain, "plain SDK target, TypeScript original"}} {
		x, y := px(10_000), py(t.ms)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d62728" stroke-width="2"/><text x="%.1f" y="%.1f" fill="#d62728" font-size="11">%s ms: %s</text>`+"\n", x-14, y, x+14, y, x+18, y+4, f(t.ms), t.label)
	}

	// Lines.
	for _, s := range ss {
		if len(s.points) == 0 {
			continue
		}
		var d strings.Builder
		for i, p := range s.points {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f %.1f ", cmd, px(p[0]), py(p[1]))
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="2.5" stroke-dasharray="%s"/>`+"\n", strings.TrimSpace(d.String()), s.color, s.dash)
		for _, p := range s.points {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s, %s messages: %s ms</title></circle>`+"\n", px(p[0]), py(p[1]), s.color, esc(s.name), commas(int64(p[0])), f(p[1]))
		}
	}

	// Legend.
	lx, ly := x0+pw+20, y0+10
	for _, s := range ss {
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2.5" stroke-dasharray="%s"/><text x="%.0f" y="%.0f">%s</text>`+"\n", lx, ly, lx+28, ly, s.color, s.dash, lx+34, ly+4, esc(s.name))
		ly += 22
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" fill="#555" font-size="11">Generated by tools/benchreport</text>`+"\n", lx, ly+10)
	b.WriteString("</svg>\n")
	return b.String()
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
