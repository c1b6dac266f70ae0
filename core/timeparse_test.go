package core

import (
	"testing"
	"time"
)

func timeSeeds() []string {
	return []string{
		"2026-02-28T10:00:00.000Z", "2026-02-28T10:00:00Z", "1970-01-01T00:00:00Z",
		"0001-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
		"2024-02-29T12:00:00.5Z", "2023-02-29T12:00:00Z", "2100-02-29T00:00:00Z", "2000-02-29T00:00:00Z",
		"2026-02-28T10:00:00.1234567891Z", "2026-02-28T10:00:00.Z", "2026-02-28T10:00:00,5Z",
		"2026-02-28T24:00:00Z", "2026-02-28T23:60:00Z", "2026-02-28T23:59:60Z", "2026-13-01T00:00:00Z",
		"2026-00-10T00:00:00Z", "2026-04-31T00:00:00Z", "2026-02-28t10:00:00Z", "2026-02-28T10:00:00z",
		"2026-02-28T10:00:00+02:00", "2026-02-28T10:00:00.250-05:30", "2026-2-28T10:00:00Z",
		"+026-02-28T10:00:00Z", "2026-02-28T1a:00:00Z", "2026-02-28T10:00:00.00a0Z", "", "yesterday",
	}
}

// checkParseTime holds the fast path to time.Parse: where parseUTC
// answers, time.Parse gives the same instant, location and encoding.
func checkParseTime(t *testing.T, s string) {
	want, werr := time.Parse(time.RFC3339Nano, s)
	got, ok := parseUTC(s)
	if ok && (werr != nil || got != want) {
		t.Fatalf("parseUTC(%q) = %v; time.Parse = %v, %v", s, got, want, werr)
	}
	pt, perr := ParseTime(s)
	// Offsets other than Z give each call its own FixedZone, so compare
	// instant and zone name.
	if (perr == nil) != (werr == nil) || !pt.Equal(want) || pt.Location().String() != want.Location().String() {
		t.Fatalf("ParseTime(%q) = %v, %v; time.Parse = %v, %v", s, pt, perr, want, werr)
	}
}

func TestParseTimeMatchesTimeParse(t *testing.T) {
	for _, s := range timeSeeds() {
		checkParseTime(t, s)
	}
	// The fast path takes the common forms.
	for _, s := range []string{"2026-02-28T10:00:00.000Z", "2026-02-28T10:00:00Z", "2024-02-29T23:59:59.123456789Z"} {
		if _, ok := parseUTC(s); !ok {
			t.Errorf("parseUTC(%q) fell back to time.Parse", s)
		}
	}
	// Every day of four centuries, through the calendar arithmetic.
	for d := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2300; d = d.AddDate(0, 0, 1) {
		checkParseTime(t, d.Add(86399*time.Second+7*time.Millisecond).Format(TimeFormat))
	}
}

func FuzzParseTime(f *testing.F) {
	for _, s := range timeSeeds() {
		f.Add(s)
	}
	f.Fuzz(checkParseTime)
}
