package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWindowBounds holds the plug-in's conservative estimate (through the
// plug-in under test, $CLIPFOLD_WASM else the embedded build, checked
// equal to core's) to
// docs/spec.md#counting-tokens-and-the-window on every kind of the corpus,
// against o200k_base and cl100k_base as js-tiktoken counts them now: at least
// 95% of each kind's messages and its total at or above the larger count,
// English prose at most 1.35× o200k_base in total. This is the check make
// window's table reports.
func TestWindowBounds(t *testing.T) {
	rows, _, err := measure()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(rows), minKinds, "the corpus has at least ten kinds")
	prose := false
	for _, r := range rows {
		assert.GreaterOrEqual(t, r.Messages, 20, "%s: enough messages for a 95%% bound", r.Kind)
		assert.Empty(t, r.violations())
		prose = prose || r.IsEnglishProse
		t.Logf("%-14s %3d msgs  o200k mean %.2f min %.2f total %.2f  cl100k mean %.2f min %.2f total %.2f  covered %.0f%%",
			r.Kind, r.Messages, r.O200k.Mean, r.O200k.Min, r.O200k.Total, r.CL100k.Mean, r.CL100k.Min, r.CL100k.Total, 100*r.Covered)
	}
	require.True(t, prose, "the corpus has English prose")
}

// TestCorpusReadme: every kind of the corpus has its source and license
// in testdata/tokens/README.md.
func TestCorpusReadme(t *testing.T) {
	repo, err := root()
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(repo, corpusDir, "README.md"))
	require.NoError(t, err)
	kinds, err := loadCorpus(repo)
	require.NoError(t, err)
	for _, k := range kinds {
		assert.Contains(t, string(readme), "`"+k.Name+"`", "README.md describes %s", k.Name)
		assert.NotEmpty(t, k.Texts, "%s has messages", k.Name)
	}
	assert.True(t, strings.Contains(string(readme), "License"), "README.md gives licenses")
}

// TestBoundsCatchARegression: the bounds fail an estimate that is low
// (chars4 on Chinese) or wasteful on English prose.
func TestBoundsCatchARegression(t *testing.T) {
	low := &kind{Name: "chinese", Texts: []string{"你好", "谢谢"}, O200k: []int{2, 2}, CL100k: []int{3, 3}, Est: []int{1, 3}}
	assert.NotEmpty(t, rowOf(low).violations(), "one message of two under, and the total under")
	wasteful := &kind{Name: proseKind, Texts: []string{"a b c"}, O200k: []int{10}, CL100k: []int{10}, Est: []int{14}}
	assert.NotEmpty(t, rowOf(wasteful).violations(), "1.4× o200k on English prose")
	fine := &kind{Name: proseKind, Texts: []string{"a b c"}, O200k: []int{10}, CL100k: []int{11}, Est: []int{13}}
	assert.Empty(t, rowOf(fine).violations())
}

// TestChineseConversationDueBeforeOver: a Chinese conversation grows turn
// by turn; shouldCompact (through the plug-in) says it is due before the
// real count (the larger of o200k_base and cl100k_base, plus the 3
// tokens a message OpenAI's chat format adds) is over the window, where
// ⌈code points / 4⌉ would let it run far past.
func TestChineseConversationDueBeforeOver(t *testing.T) {
	_, kinds, err := measure()
	require.NoError(t, err)
	var zh *kind
	for _, k := range kinds {
		if k.Name == "chinese" {
			zh = k
		}
	}
	require.NotNil(t, zh)
	inst, done, err := plugin()
	require.NoError(t, err)
	defer done()
	const window = 4000
	limit := int(0.8 * window)
	due := func(msgs []map[string]string, estimator string) bool {
		in, _ := json.Marshal(map[string]any{"messages": msgs,
			"config": map[string]any{"model_max_tokens": window, "token_estimator": estimator}})
		out, err := inst.Call(context.Background(), "shouldCompact", in)
		require.NoError(t, err)
		return gjson.GetBytes(out, "due").Bool()
	}
	var msgs []map[string]string
	real, dueAt, chars4At, overAt := 0, -1, -1, -1
	for turn := 0; overAt < 0 || chars4At < 0; turn++ {
		i := turn % len(zh.Texts)
		msgs = append(msgs, map[string]string{"role": []string{"user", "assistant"}[turn%2], "content": zh.Texts[i]})
		real += max(zh.O200k[i], zh.CL100k[i]) + 3
		if dueAt < 0 && due(msgs, "conservative") {
			dueAt = turn
		}
		if chars4At < 0 && due(msgs, "chars4") {
			chars4At = turn
		}
		if overAt < 0 && real > limit {
			overAt = turn
		}
	}
	require.GreaterOrEqual(t, dueAt, 0)
	assert.LessOrEqual(t, dueAt, overAt, "due at message %d, the real count is over the limit at %d", dueAt, overAt)
	assert.Greater(t, chars4At, overAt, "chars4 is due only at message %d", chars4At)
	t.Logf("limit %d: due at message %d, really over at %d, chars4 due at %d", limit, dueAt, overAt, chars4At)
}
