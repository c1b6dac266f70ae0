package waitstats

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestOf(t *testing.T) {
	assert.Equal(t, Stats{}, Of(nil))
	ms := make([]float64, 100)
	for i := range ms {
		ms[i] = float64(100 - i) // unsorted: 100 … 1
	}
	assert.Equal(t, Stats{N: 100, P50: 50, P95: 95, P99: 99, Max: 100}, Of(ms))
	// Under 20 waits the 95th percentile is the longest (nearest rank).
	in := []float64{3, 1, 2}
	assert.Equal(t, Stats{N: 3, P50: 2, P95: 3, P99: 3, Max: 3}, Of(in))
	assert.Equal(t, []float64{3, 1, 2}, in, "the input is left as it is")
	assert.Equal(t, Stats{N: 2, P50: 1.5, P95: 2.25, P99: 2.25, Max: 2.25},
		OfDurations([]time.Duration{2250 * time.Microsecond, 1500*time.Microsecond + 400}))
}
