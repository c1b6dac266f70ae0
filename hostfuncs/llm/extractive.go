package llm

import (
	"context"
	"errors"

	"github.com/clipfold/clipfold/core"
)

// NewExtractive returns the offline Client: core.ExtractiveSummary, which
// needs no network, no key and no model, and gives the same summary for the
// same request. It is the default so that clipfold works out of the box and
// in tests; it never fails except on a nil request or a done context. The
// command pairs it with the config key summarizer = "extractive", so
// compress summarizes inside the plug-in (dated lines) and this client
// only answers when a caller asks for summarizer = "llm".
func NewExtractive() Client { return extractive{} }

type extractive struct{}

func (extractive) Complete(ctx context.Context, req *core.ModelRequest) (core.ModelResponse, error) {
	if req == nil {
		return core.ModelResponse{}, &core.LLMError{Code: core.LLMInvalidRequest, Message: "request: missing"}
	}
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return core.ModelResponse{}, &core.LLMError{Code: core.LLMTimeout, Message: "extractive: deadline passed before the call", Retryable: true}
		}
		return core.ModelResponse{}, &core.LLMError{Code: core.LLMOther, Message: "extractive: " + err.Error()}
	}
	text := core.ExtractiveSummary(req)
	in := core.EstimateTokens(req.System)
	for _, m := range req.Messages {
		in += core.EstimateTokens(m.Content)
	}
	return core.ModelResponse{
		Content:      []core.ContentBlock{{Type: "text", Text: text}},
		StopReason:   "end_turn",
		InputTokens:  in,
		OutputTokens: core.EstimateTokens(text),
	}, nil
}
