package store_test

import (
	"fmt"
	"testing"

	"github.com/clipfold/clipfold/hostfuncs/store"
)

// BenchmarkRankDecoded: ranking 10,500 decoded vectors (one scope of the
// 10,000-message archive) against a query, by dimension.
func BenchmarkRankDecoded(b *testing.B) {
	for _, dims := range []int{384, 768, 1536} {
		b.Run(fmt.Sprintf("dims=%d", dims), func(b *testing.B) {
			const n = 10_500
			flat := make([]float32, n*dims)
			for i := range flat {
				flat[i] = float32((i*7919)%1000) / 1000
			}
			refs := make([]store.DocRef, n)
			for i := range refs {
				refs[i] = store.DocRef{Kind: store.HitMessage, ID: fmt.Sprint(i)}
			}
			q := flat[:dims]
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				r := store.NewRanker(q, 30)
				for i := range refs {
					r.AddDecoded(refs[i], flat[i*dims:(i+1)*dims])
				}
				if len(r.Result()) != 30 {
					b.Fatal("short")
				}
			}
		})
	}
}
