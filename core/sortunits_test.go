package core

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortUnits holds sortUnits to slices.SortFunc with compareUnits on
// lists short and long, with ties, NaNs, zeros of both signs and
// infinities.
func TestSortUnits(t *testing.T) {
	specials := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), -1e-300, 1e-300, 5, 5, -5}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 255, 256, 257, 1000, 10_000} {
		for round := 0; round < 5; round++ {
			order := make([]unit, n)
			for i := range order {
				var s float64
				switch r.IntN(4) {
				case 0:
					s = specials[r.IntN(len(specials))]
				case 1:
					s = float64(r.IntN(8)) // many ties
				default:
					s = r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10))
				}
				order[i] = unit{score: s, first: i * 2}
			}
			want := slices.Clone(order)
			slices.SortFunc(want, compareUnits)
			sortUnits(order) // scores become sort keys: compare firsts
			for i := range order {
				if order[i].first != want[i].first {
					t.Fatalf("n=%d round %d: position %d holds first %d, want %d (score %v)", n, round, i, order[i].first, want[i].first, want[i].score)
				}
			}
		}
	}
}

// All scores equal: every radix pass is skipped, the order is kept.
func TestSortUnitsAllTied(t *testing.T) {
	order := make([]unit, 1000)
	for i := range order {
		order[i] = unit{score: 3.5, first: i}
	}
	sortUnits(order)
	for i, u := range order {
		if u.first != i {
			t.Fatalf("position %d holds first %d", i, u.first)
		}
	}
}
