// Package waitstats summarizes how long an agent waited: the count, the
// median, the 95th and 99th percentiles (nearest rank) and the longest,
// in milliseconds — what `clipfold run --ahead` reports and tools/ahead
// tabulates, computed once for both.
package waitstats

import (
	"math"
	"slices"
	"time"
)

// Stats is a summary of waits in milliseconds.
type Stats struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Of summarizes waits given in milliseconds. A percentile is the nearest
// rank: with fewer than 20 waits the 95th is the longest.
func Of(ms []float64) Stats {
	if len(ms) == 0 {
		return Stats{}
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	rank := func(p float64) float64 { return s[max(int(math.Ceil(p*float64(len(s))))-1, 0)] }
	return Stats{N: len(s), P50: rank(0.5), P95: rank(0.95), P99: rank(0.99), Max: s[len(s)-1]}
}

// OfDurations is Of of durations, each taken to the microsecond.
func OfDurations(ws []time.Duration) Stats {
	ms := make([]float64, len(ws))
	for i, w := range ws {
		ms[i] = float64(w.Microseconds()) / 1000
	}
	return Of(ms)
}
