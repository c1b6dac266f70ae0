package embeddings_test

import (
	"math"
	"testing"

	"github.com/clipfold/clipfold/hostfuncs/embeddings"
)

// FuzzDecode: whatever a server answers, the decoders never panic, and
// what they accept is one finite, non-empty vector per text, all of one
// length, in order.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"object":"list","data":[{"object":"embedding","index":1,"embedding":[1,2]},{"object":"embedding","index":0,"embedding":[3,4]}],"model":"m"}`,
		`{"data":[{"index":0,"embedding":"AAAAPwAAgL8AAABA"}]}`,
		`{"data":[{"embedding":[1e39]}]}`,
		`{"data":[{"index":-1,"embedding":[1]}]}`,
		`{"model":"m","embeddings":[[0.1,0.2],[0.3,0.4]]}`,
		`{"embeddings":[[],[1]]}`,
		`{"error":"model not found"}`,
		`[]`, `null`, ``, `{"data":null}`, `{"data":[null]}`, `{"embeddings":[null]}`,
	} {
		for n := 0; n <= 2; n++ {
			f.Add([]byte(s), n)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		for _, decode := range []func([]byte, int) ([][]float32, error){embeddings.DecodeOpenAI, embeddings.DecodeOllama} {
			vs, err := decode(body, n)
			if err != nil {
				continue
			}
			if len(vs) != n {
				t.Fatalf("%d vectors for %d texts", len(vs), n)
			}
			for i, v := range vs {
				if len(v) == 0 || len(v) != len(vs[0]) {
					t.Fatalf("vector %d has %d dimensions, vector 0 %d", i, len(v), len(vs[0]))
				}
				for _, x := range v {
					if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
						t.Fatalf("vector %d holds %v", i, x)
					}
				}
			}
		}
	})
}
