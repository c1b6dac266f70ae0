package core

// ModelMessage is one message of a provider-neutral model request. The
// summarizer only ever sends text, so Content is a string; decoders join a
// content-part array's text parts with "\n".
type ModelMessage struct {
	Role    Role // RoleUser, RoleAssistant or RoleSystem
	Content string
}

// ModelRequest is the provider-neutral LLM request of
// docs/spec.md#model-requests-and-responses.
type ModelRequest struct {
	System      string
	Messages    []ModelMessage
	Model       string
	MaxTokens   int
	Temperature float64
	// TimeoutMs is how long the host may take; 0 means not set.
	TimeoutMs int
}

// ContentBlock is one block of a model response.
type ContentBlock struct {
	Type string // "text" for the blocks clipfold reads
	Text string
}

// ModelResponse is the provider-neutral LLM response of
// docs/spec.md#model-requests-and-responses.
type ModelResponse struct {
	Content      []ContentBlock
	StopReason   string
	InputTokens  int
	OutputTokens int
}

// Text joins the response's text blocks (seed 004: filter type text, join "").
func (r *ModelResponse) Text() string {
	if len(r.Content) == 1 && r.Content[0].Type == "text" {
		return r.Content[0].Text
	}
	s := ""
	for _, b := range r.Content {
		if b.Type == "text" {
			s += b.Text
		}
	}
	return s
}

// LLM error codes of docs/spec.md#model-requests-and-responses.
const (
	LLMTimeout         = "timeout"
	LLMRateLimited     = "rate_limited"
	LLMUnavailable     = "unavailable"
	LLMContextOverflow = "context_overflow"
	LLMInvalidRequest  = "invalid_request"
	LLMAuth            = "auth"
	LLMOther           = "other"
)

// LLMError is a failed model call as a host reports it.
type LLMError struct {
	Code      string
	Message   string
	Retryable bool
}

func (e *LLMError) Error() string { return e.Code + ": " + e.Message }
