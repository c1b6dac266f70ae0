package api

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckShape(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1)
	for _, tc := range []struct {
		name, in string
		wantErr  string // "" means accepted
	}{
		{"brackets inside strings do not nest", `{"a":"` + deep + `"}`, ""},
		{"escaped quote keeps the string open", `{"a":"x\"` + deep + `"}`, ""},
		{"an even run of backslashes closes it", `{"a":"x\\\\"` + `,"b":` + deep, "nests deeper"},
		{"deep nesting outside strings", `{"a":` + deep, "nests deeper"},
		{"exactly MaxDepth is fine", strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), ""},
		{"unterminated string is left to the validator", `{"a":"abc`, ""},
		{"invalid UTF-8 names the byte", "{\"a\":\"\xff\"}", "at byte 6"},
		{"empty", "  ", "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkShape([]byte(tc.in))
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.wantErr)
		})
	}
}
