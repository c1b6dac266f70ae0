package core

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFirstDuplicate(t *testing.T) {
	keys := func(ks ...string) func(int) string { return func(i int) string { return ks[i] } }
	for _, tc := range []struct {
		ks   []string
		i, j int
	}{
		{nil, -1, -1},
		{[]string{"a"}, -1, -1},
		{[]string{"a", "b", "c"}, -1, -1},
		{[]string{"a", "b", "a"}, 2, 0},
		{[]string{"a", "b", "b", "a"}, 2, 1},
		{[]string{"", "x", ""}, 2, 0},
		{[]string{"abcdefgh1", "abcdefgh2", "abcdefgh1"}, 2, 0},
	} {
		i, j := FirstDuplicate(len(tc.ks), keys(tc.ks...))
		require.Equal(t, [2]int{tc.i, tc.j}, [2]int{i, j}, "%q", tc.ks)
	}
	// Many keys, a duplicate at the end: as a map would answer.
	ks := make([]string, 100_001)
	for i := range ks[:100_000] {
		ks[i] = "id-" + strconv.Itoa(i)
	}
	ks[100_000] = ks[77_777]
	i, j := FirstDuplicate(len(ks), keys(ks...))
	require.Equal(t, [2]int{100_000, 77_777}, [2]int{i, j})
}

func TestOccurrences(t *testing.T) {
	o := newOccurrences(3)
	a, b := [16]byte{1}, [16]byte{2}
	require.Equal(t, 0, o.add(a))
	require.Equal(t, 0, o.add(b))
	require.Equal(t, 1, o.add(a))
	require.Equal(t, 2, o.add(a))
	require.Equal(t, 1, o.add(b))
	// More distinct digests than asked for room for still count right.
	o = newOccurrences(1)
	for k := 0; k < 3; k++ {
		for i := 0; i < 40; i++ {
			require.Equal(t, k, o.add([16]byte{byte(i), 9}), "digest %d", i)
		}
	}
}

func TestHashStringLengths(t *testing.T) {
	seen := map[uint64]string{}
	s := ""
	for n := 0; n < 40; n++ {
		h := hashString(s, 1)
		require.NotContains(t, seen, h, "%q collides with %q", s, seen[h])
		seen[h] = s
		s += "\x00"
	}
}

func TestU64Counts(t *testing.T) {
	m := newU64Counts(0)
	want := map[uint64]int32{}
	for i := uint64(0); i < 5000; i++ {
		k := i * 0x9e3779b97f4a7c15 // and 0 itself
		*m.at(k) += int32(i%7) + 1
		want[k] += int32(i%7) + 1
		if i%3 == 0 {
			*m.at(k)++
			want[k]++
		}
	}
	require.Equal(t, len(want), m.n)
	for k, v := range want {
		got, ok := m.get(k)
		require.True(t, ok)
		require.Equal(t, v, got)
	}
	_, ok := m.get(12345)
	require.False(t, ok)
}
