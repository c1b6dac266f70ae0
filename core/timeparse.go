package core

import "time"

// parseUTC is ParseTime's fast path for the form clipfold writes and most
// hosts send: YYYY-MM-DDTHH:MM:SS, up to nine fraction digits, then Z. It
// reports false for anything else, and time.Parse decides; where it
// reports true its result is time.Parse's (FuzzParseTime holds it to
// that). time.Parse's general path was 5% of a 10k-message split through
// the plug-in, where every message has a created_at.
func parseUTC(s string) (time.Time, bool) {
	n := len(s)
	if n < 20 || n > 30 || s[n-1] != 'Z' {
		return time.Time{}, false
	}
	_ = s[19]
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	// Straight-line digit arithmetic: under Wasm a call per field costs
	// more than the field.
	y1, y2, y3, y4 := s[0]-'0', s[1]-'0', s[2]-'0', s[3]-'0'
	mo1, mo2, d1, d2 := s[5]-'0', s[6]-'0', s[8]-'0', s[9]-'0'
	h1, h2, mi1, mi2 := s[11]-'0', s[12]-'0', s[14]-'0', s[15]-'0'
	s1, s2 := s[17]-'0', s[18]-'0'
	if y1 > 9 || y2 > 9 || y3 > 9 || y4 > 9 || mo1 > 9 || mo2 > 9 || d1 > 9 || d2 > 9 ||
		h1 > 9 || h2 > 9 || mi1 > 9 || mi2 > 9 || s1 > 9 || s2 > 9 {
		return time.Time{}, false
	}
	year := int(y1)*1000 + int(y2)*100 + int(y3)*10 + int(y4)
	month, day := int(mo1)*10+int(mo2), int(d1)*10+int(d2)
	hour, min, sec := int(h1)*10+int(h2), int(mi1)*10+int(mi2), int(s1)*10+int(s2)
	if year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour > 23 || min > 59 || sec > 59 {
		return time.Time{}, false
	}
	nsec := 0
	if n > 20 { // a fraction: '.' and 1 to 9 digits
		if s[19] != '.' || n == 21 {
			return time.Time{}, false
		}
		scale := 1_000_000_000
		for i := 20; i < n-1; i++ {
			c := s[i] - '0'
			if c > 9 {
				return time.Time{}, false
			}
			scale /= 10
			nsec += int(c) * scale
		}
	}
	days := daysFromCivil(year, month, day)
	return time.Unix(days*86400+int64(hour*3600+min*60+sec), int64(nsec)).UTC(), true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to the given date of
// the proleptic Gregorian calendar, for years from 1 (Howard Hinnant's
// days_from_civil, with March as the first month of its year).
func daysFromCivil(year, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := year / 400 // year >= 0
	yoe := year - era*400
	mp := (month + 9) % 12
	doy := (153*mp+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}
