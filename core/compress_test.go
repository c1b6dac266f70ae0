package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// docs/spec.md#retries-and-the-deadline: retry n waits backoff_base_ms·2ⁿ⁻¹,
// never past the deadline, for any configured values.
func TestBackoff(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		base, n int
		limit   time.Duration
		want    time.Duration
	}{
		{100, 1, time.Hour, 100 * ms},
		{100, 2, time.Hour, 200 * ms},
		{100, 3, time.Hour, 400 * ms},
		{100, 3, 250 * ms, 250 * ms},
		{0, 5, time.Hour, 0},
		{MaxInt, 40, time.Minute, time.Minute},
		{1, 1 << 30, time.Second, time.Second},
	} {
		require.Equal(t, tc.want, backoff(tc.base, tc.n, tc.limit), "base %d, retry %d", tc.base, tc.n)
	}
}
