package core

// Error codes of docs/spec.md#errors-and-limits. Every error an export returns
// carries one.
const (
	CodeInvalidJSON  = "invalid_json"
	CodeInvalidInput = "invalid_input"
	CodeTooLarge     = "too_large"
	CodeHostError    = "host_error"
	CodeInternal     = "internal"
)

// Error is an export failure: a code of docs/spec.md#errors-and-limits, the
// path of the offending field (e.g. "messages[3].role", empty when the whole
// input is at fault) and what is wrong with it. Its text is "<code>: <field>:
// <what>".
type Error struct {
	Code  string
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Code + ": " + e.Msg
	}
	return e.Code + ": " + e.Field + ": " + e.Msg
}

// Invalid returns an invalid_input error for field.
func Invalid(field, msg string) *Error {
	return &Error{Code: CodeInvalidInput, Field: field, Msg: msg}
}
