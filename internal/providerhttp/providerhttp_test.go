package providerhttp

import (
	"errors"
	"strings"
	"testing"
)

func TestBaseURL(t *testing.T) {
	for _, tc := range []struct{ raw, def, want string }{
		{"", "https://api.openai.com/v1", "https://api.openai.com/v1"},
		{"http://localhost:11434/", "x", "http://localhost:11434"},
		{"https://openrouter.ai/api/v1//", "", "https://openrouter.ai/api/v1"},
	} {
		got, err := BaseURL(tc.raw, tc.def)
		if err != nil || got != tc.want {
			t.Errorf("BaseURL(%q, %q) = %q, %v; want %q", tc.raw, tc.def, got, err, tc.want)
		}
	}
	for _, raw := range []string{"localhost:11434", "ftp://user:hunter2@h", "http://", "https:///v1", "::"} {
		_, err := BaseURL(raw, "http://default")
		if !errors.Is(err, ErrBaseURL) {
			t.Errorf("BaseURL(%q): %v, want ErrBaseURL", raw, err)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("BaseURL(%q): the error shows the password: %v", raw, err)
		}
	}
}

func TestKey(t *testing.T) {
	t.Setenv("PROVIDERHTTP_TEST_KEY", "  from-env \n")
	t.Setenv("PROVIDERHTTP_TEST_DEFAULT", "from-default")
	for _, tc := range []struct{ key, env, def, value, variable string }{
		{"given", "PROVIDERHTTP_TEST_KEY", "PROVIDERHTTP_TEST_DEFAULT", "given", "PROVIDERHTTP_TEST_KEY"},
		{"", "PROVIDERHTTP_TEST_KEY", "PROVIDERHTTP_TEST_DEFAULT", "from-env", "PROVIDERHTTP_TEST_KEY"},
		{"", "", "PROVIDERHTTP_TEST_DEFAULT", "from-default", "PROVIDERHTTP_TEST_DEFAULT"},
		{"", "PROVIDERHTTP_TEST_UNSET", "PROVIDERHTTP_TEST_DEFAULT", "", "PROVIDERHTTP_TEST_UNSET"},
		{"", "", "", "", ""},
		{"given", "", "", "given", ""},
	} {
		value, variable := Key(tc.key, tc.env, tc.def)
		if value != tc.value || variable != tc.variable {
			t.Errorf("Key(%q, %q, %q) = %q, %q; want %q, %q", tc.key, tc.env, tc.def, value, variable, tc.value, tc.variable)
		}
	}
}

func TestIsOpenAI(t *testing.T) {
	for base, want := range map[string]bool{
		"https://api.openai.com/v1":   true,
		"https://api.openai.com:443":  true,
		"http://localhost:8080/v1":    false,
		"https://api.openai.com.evil": false,
		"https://openrouter.ai/api":   false,
	} {
		if got := IsOpenAI(base); got != want {
			t.Errorf("IsOpenAI(%q) = %v", base, got)
		}
	}
}

func TestHeaderIsFresh(t *testing.T) {
	a, b := Header(), Header()
	a.Set("Authorization", "Bearer k")
	if b.Get("Authorization") != "" || b.Get("Content-Type") != "application/json" || b.Get("User-Agent") != "clipfold" {
		t.Fatalf("Header() = %v after another's change", b)
	}
}
