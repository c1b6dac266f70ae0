package clipfold_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/llm"
	"github.com/stretchr/testify/require"
)

// usageHistory is a short chat: a user question, an answer, a follow-up.
func usageHistory() []json.RawMessage {
	var out []json.RawMessage
	for i, m := range []map[string]any{
		{"role": "user", "content": "Which regions does the checkout service run in, and who is on call this week?"},
		{"role": "assistant", "content": "It runs in eu-west-1 and us-east-2; Priya is on call until Friday."},
		{"role": "user", "content": "Then ask Priya about the failed deploy of build 4471 last night."},
	} {
		m["id"] = fmt.Sprintf("u%d", i)
		b, _ := json.Marshal(m)
		out = append(out, b)
	}
	return out
}

func estimate(t *testing.T, c *clipfold.Compactor, msgs []json.RawMessage) int {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"messages": msgs})
	out, err := c.Call(context.Background(), "estimateTokens", in)
	require.NoError(t, err)
	var r struct{ Tokens int }
	require.NoError(t, json.Unmarshal(out, &r))
	return r.Tokens
}

// The provider's count of the messages it saw wins; only the rest is
// estimated. A provider that counts more than the estimate makes
// compaction due earlier.
func TestShouldCompactHonoursUsage(t *testing.T) {
	ctx := context.Background()
	c := openBuilt(t, map[string]any{"model_max_tokens": 1000, "context_budget": 0.8, "overhead_tokens": 300})
	h := usageHistory()
	est := estimate(t, c, h)
	due, err := c.ShouldCompact(ctx, h, nil)
	require.NoError(t, err)
	require.Equal(t, est+300, due.Tokens, "without usage: the estimate and overhead_tokens")
	require.False(t, due.Due)

	// The request that held the first two messages counted 790 tokens
	// (system prompt and tools included): 790 + the last message's
	// estimate, with no overhead_tokens on top.
	due, err = c.ShouldCompact(ctx, h, &clipfold.ShouldCompactOptions{Usage: &clipfold.Usage{InputTokens: 790, Messages: 2}})
	require.NoError(t, err)
	require.Equal(t, 790+estimate(t, c, h[2:]), due.Tokens)
	require.True(t, due.Due, "the provider's count makes it due")
	require.Equal(t, 800, due.Limit)

	// Bad usage is the plug-in's invalid_input naming the field.
	for _, tc := range []struct {
		u    clipfold.Usage
		want string
	}{
		{clipfold.Usage{InputTokens: 10, Messages: 4}, "usage.messages"},
		{clipfold.Usage{InputTokens: -1, Messages: 1}, "usage.input_tokens"},
		{clipfold.Usage{InputTokens: 5, Messages: -1}, "usage.messages"},
	} {
		_, err := c.ShouldCompact(ctx, h, &clipfold.ShouldCompactOptions{Usage: &tc.u})
		var ce *clipfold.CallError
		require.True(t, errors.As(err, &ce), "%v", err)
		require.Equal(t, "invalid_input", ce.Code)
		require.True(t, strings.HasPrefix(ce.Message, tc.want+":"), ce.Message)
		_, err = c.Compress(ctx, "bad-usage", h, &clipfold.CompressOptions{CallerOwned: true, Usage: &tc.u})
		require.True(t, errors.As(err, &ce), "%v", err)
		require.True(t, strings.HasPrefix(ce.Message, tc.want+":"), ce.Message)
	}
}

// OverheadTokens is the estimate of the system prompt and the tool
// schemas, through the estimateTokens export; as overhead_tokens it is
// added to every count without usage.
func TestOverheadTokens(t *testing.T) {
	ctx := context.Background()
	c := openBuilt(t, map[string]any{"model_max_tokens": 1000})
	system := "You are the on-call assistant of the checkout team. Answer briefly; cite the runbook section."
	tools := []map[string]any{{"type": "function", "function": map[string]any{"name": "get_deploy",
		"description": "Reads a deploy's log by build number.",
		"parameters":  map[string]any{"type": "object", "properties": map[string]any{"build": map[string]any{"type": "integer"}}}}}}
	n, err := c.OverheadTokens(ctx, system, tools)
	require.NoError(t, err)
	toolsJSON, _ := json.Marshal(tools)
	want := estimate(t, c, []json.RawMessage{mustJSON(map[string]string{"role": "system", "content": system}),
		mustJSON(map[string]string{"role": "system", "content": string(toolsJSON)})})
	require.Equal(t, want, n)
	require.Greater(t, n, 40)
	only, err := c.OverheadTokens(ctx, system, nil)
	require.NoError(t, err)
	require.Less(t, only, n)
	zero, err := c.OverheadTokens(ctx, "", []any{})
	require.NoError(t, err)
	require.Zero(t, zero)
	_, err = c.OverheadTokens(ctx, "", func() {})
	require.ErrorContains(t, err, "tools")

	// Under token_estimator chars4 (the Compactor's config) it counts as chars4 does.
	c4 := openBuilt(t, map[string]any{"token_estimator": "chars4"})
	n4, err := c4.OverheadTokens(ctx, system, nil)
	require.NoError(t, err)
	require.Equal(t, (len([]rune(system))+3)/4, n4)

	h := usageHistory()
	due, err := c.ShouldCompact(ctx, h, nil)
	require.NoError(t, err)
	due2, err := c.ShouldCompact(ctx, h, &clipfold.ShouldCompactOptions{Config: map[string]any{"overhead_tokens": n}})
	require.NoError(t, err)
	require.Equal(t, due.Tokens+n, due2.Tokens)
	require.Equal(t, 800, due2.Limit, "the call's config is laid over the Compactor's")
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Compress with usage: OnlyIfDue compacts when the provider's count says
// the history is due (and not without it), caller- and store-owned.
func TestCompressHonoursUsage(t *testing.T) {
	ctx := context.Background()
	cfg := map[string]any{"model_max_tokens": 1500, "context_budget": 0.8, "keep_recent": 4, "token_estimator": "conservative"}
	var h []json.RawMessage
	for i := 0; i < 10; i++ {
		h = append(h, frameworkTurn(i)...)
	}
	for _, callerOwned := range []bool{true, false} {
		t.Run(fmt.Sprintf("caller_owned=%v", callerOwned), func(t *testing.T) {
			c := openBuilt(t, cfg)
			est := estimate(t, c, h)
			require.Less(t, est, 1200, "the estimate alone is not due")
			r, err := c.Compress(ctx, "plain", h, &clipfold.CompressOptions{CallerOwned: callerOwned, OnlyIfDue: true})
			require.NoError(t, err)
			require.False(t, r.Failed, r.FailureMessage)
			require.Zero(t, r.MessagesCompressed, "not due without usage")
			require.Equal(t, est, r.TokensBefore)

			// The last request held all but the last turn, and the provider
			// counted 300 tokens more than their estimate (a system prompt,
			// say): over the 1,200-token budget.
			n := estimate(t, c, h[:len(h)-4]) + 300
			rest := estimate(t, c, h[len(h)-4:])
			require.Greater(t, n+rest, 1200)
			u := &clipfold.Usage{InputTokens: n, Messages: len(h) - 4}
			r, err = c.Compress(ctx, "usage", h, &clipfold.CompressOptions{CallerOwned: callerOwned, OnlyIfDue: true, Usage: u})
			require.NoError(t, err)
			require.False(t, r.Failed, r.FailureMessage)
			require.Equal(t, n+rest, r.TokensBefore)
			require.Greater(t, r.MessagesCompressed, 0, "due by the provider's count")
			require.LessOrEqual(t, r.TokensAfter, 1200)
		})
	}
}

// A host running its agent loop with a hostfuncs/llm client passes the
// provider's usage of each answer (UsageOf): here an OpenAI-compatible
// server that counts 900 input tokens for a short request.
func TestUsageOfAnLLMClientsAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"Priya is on call."},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":900,"completion_tokens":6}}`)
	}))
	defer srv.Close()
	client, err := llm.NewOpenAICompat(llm.Config{BaseURL: srv.URL, APIKey: "k", Model: "m"})
	require.NoError(t, err)
	req := &core.ModelRequest{Messages: []core.ModelMessage{{Role: core.RoleUser, Content: "Who is on call?"}}, MaxTokens: 50}
	resp, err := client.Complete(context.Background(), req)
	require.NoError(t, err)
	u := clipfold.UsageOf(req, &resp)
	require.Equal(t, clipfold.Usage{InputTokens: 900, Messages: 1}, *u)

	c := openBuilt(t, map[string]any{"model_max_tokens": 1000})
	history := []json.RawMessage{mustJSON(map[string]string{"role": "user", "content": "Who is on call?"}),
		mustJSON(map[string]string{"role": "assistant", "content": resp.Text()})}
	due, err := c.ShouldCompact(context.Background(), history, &clipfold.ShouldCompactOptions{Usage: u})
	require.NoError(t, err)
	require.True(t, due.Due)
	require.Equal(t, 900+estimate(t, c, history[1:]), due.Tokens)
}
