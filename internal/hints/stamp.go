package hints

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Precision is the smallest unit a written date names.
type Precision uint8

// The precisions of the W3C datetime forms, coarsest first. The zero value is PrecisionNone, the
// precision of a zero Stamp.
const (
	PrecisionNone   Precision = iota
	PrecisionYear             // "2024"
	PrecisionMonth            // "2024-05"
	PrecisionDay              // "2024-05-01"
	PrecisionMinute           // "2024-05-01T10:30Z"
	PrecisionSecond           // "2024-05-01T10:30:15Z", and RFC 822/1123 feed dates
	PrecisionExact            // with a decimal fraction of a second
)

var precisionNames = [...]string{"none", "year", "month", "day", "minute", "second", "exact"}

func (p Precision) String() string {
	if int(p) < len(precisionNames) {
		return precisionNames[p]
	}
	return fmt.Sprintf("Precision(%d)", p)
}

// Stamp is a date as a site wrote it, with the uncertainty its written form leaves. The moment it
// names lies within Bounds.
type Stamp struct {
	// At is the start of the written period: the value as written, read as UTC when no zone was
	// written.
	At time.Time `json:"at"`
	// Precision is the unit the value was written in.
	Precision Precision `json:"precision"`
	// Zoneless reports that no time zone was written (always so for a date without a time, which
	// the W3C profile gives no zone), so At may be off by the site's UTC offset.
	Zoneless bool `json:"zoneless,omitempty"`
}

// IsZero reports whether s holds no date. A parsed "0001" is a date (an impossible one).
func (s Stamp) IsZero() bool { return s.At.IsZero() && s.Precision == PrecisionNone }

// Time zones in use run from UTC−12 to UTC+14: a zoneless local time L is somewhere in
// [L−14h, L+12h] UTC.
const (
	maxZoneAhead  = 14 * time.Hour
	maxZoneBehind = 12 * time.Hour
)

// Bounds returns the earliest and latest instants the written value can name: "2024-05-01" is any
// moment of that day in any time zone, 2024-04-30T10:00Z to 2024-05-02T12:00Z. A zero Stamp returns
// two zero times.
func (s Stamp) Bounds() (earliest, latest time.Time) {
	if s.IsZero() {
		return time.Time{}, time.Time{}
	}
	earliest, latest = s.At, s.At
	switch s.Precision {
	case PrecisionYear:
		latest = s.At.AddDate(1, 0, 0)
	case PrecisionMonth:
		latest = s.At.AddDate(0, 1, 0)
	case PrecisionDay:
		latest = s.At.AddDate(0, 0, 1)
	case PrecisionMinute:
		latest = s.At.Add(time.Minute)
	case PrecisionSecond:
		latest = s.At.Add(time.Second)
	}
	if s.Zoneless {
		earliest = earliest.Add(-maxZoneAhead)
		latest = latest.Add(maxZoneBehind)
	}
	return earliest, latest
}

func (s Stamp) String() string {
	if s.IsZero() {
		return ""
	}
	layout := time.RFC3339Nano
	switch s.Precision {
	case PrecisionYear:
		layout = "2006"
	case PrecisionMonth:
		layout = "2006-01"
	case PrecisionDay:
		layout = time.DateOnly
	case PrecisionMinute:
		layout = "2006-01-02T15:04Z07:00"
	case PrecisionSecond:
		layout = time.RFC3339
	}
	if s.Zoneless && s.Precision >= PrecisionMinute {
		layout = strings.TrimSuffix(layout, "Z07:00")
	}
	return s.At.Format(layout)
}

// errDate is wrapped by every ParseStamp error.
var errDate = errors.New("not a W3C datetime")

// ParseStamp reads a sitemap lastmod. It accepts every form of the W3C datetime profile the
// protocol names (year, year-month, date, and date with hh:mm, hh:mm:ss or hh:mm:ss.fraction
// followed by "Z" or ±hh:mm), and the wrong forms that real sitemaps emit and whose meaning is
// unambiguous:
//   - a time without a zone ("2024-05-01T10:30:00"), kept as Zoneless;
//   - a space instead of "T" between date and time, and lower-case "t" or "z";
//   - a zone written ±hhmm or ±hh;
//   - RFC 1123 and RFC 822 dates, as in HTTP headers and RSS ("Wed, 01 May 2024 10:30:00 GMT").
//
// Anything else — other orders ("01/05/2024"), Unix times, words — is refused: a guessed date is worse
// than none. ParseStamp checks only the form; whether the date is plausible is the caller's rule
// (ParseSitemap drops dates before 1991 and in the site's future).
func ParseStamp(s string) (Stamp, error) {
	v := strings.TrimSpace(s)
	if len(v) < 4 || digits(v[:4]) < 0 {
		if st, ok := parseRFC1123(v); ok {
			return st, nil
		}
		return Stamp{}, fmt.Errorf("%w: %q", errDate, s)
	}
	if len(v) > 10 && (v[10] == ' ' || v[10] == 't') {
		v = v[:10] + "T" + v[11:]
	}
	date, clock, hasClock := strings.Cut(v, "T")
	switch {
	case !hasClock && len(date) == 4:
		return parseIn(s, date, "2006", PrecisionYear, time.UTC, true)
	case !hasClock && len(date) == 7:
		return parseIn(s, date, "2006-01", PrecisionMonth, time.UTC, true)
	case !hasClock:
		return parseIn(s, date, time.DateOnly, PrecisionDay, time.UTC, true)
	}
	clock, zone, zoneless, err := splitZone(clock)
	if err != nil {
		return Stamp{}, fmt.Errorf("%w: %q: %v", errDate, s, err)
	}
	var layout string
	var prec Precision
	switch {
	case len(clock) == 5:
		layout, prec = "15:04", PrecisionMinute
	case len(clock) == 8:
		layout, prec = "15:04:05", PrecisionSecond
	case len(clock) > 9 && clock[8] == '.':
		layout, prec = "15:04:05.999999999", PrecisionExact
	default:
		return Stamp{}, fmt.Errorf("%w: %q: bad time of day", errDate, s)
	}
	return parseIn(s, date+"T"+clock, time.DateOnly+"T"+layout, prec, zone, zoneless)
}

func parseIn(orig, v, layout string, prec Precision, loc *time.Location, zoneless bool) (Stamp, error) {
	t, err := time.ParseInLocation(layout, v, loc)
	if err != nil || t.Format(layout) != v && prec != PrecisionExact {
		// time.Parse accepts "2024-5-1" for no layout here, but a round trip also refuses
		// single-digit fields and other looseness the profile does not allow.
		return Stamp{}, fmt.Errorf("%w: %q", errDate, orig)
	}
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		// A zone can push year 9999 into 10000, which no four-digit form can write back.
		return Stamp{}, fmt.Errorf("%w: %q: out of range", errDate, orig)
	}
	return Stamp{At: t.UTC(), Precision: prec, Zoneless: zoneless}, nil
}

// splitZone separates the zone designator from a time of day and returns it as a location.
func splitZone(clock string) (string, *time.Location, bool, error) {
	if n := len(clock); n > 0 && (clock[n-1] == 'Z' || clock[n-1] == 'z') {
		return clock[:n-1], time.UTC, false, nil
	}
	i := strings.LastIndexAny(clock, "+-")
	if i < 0 {
		return clock, time.UTC, true, nil
	}
	tz := clock[i+1:]
	switch {
	case len(tz) == 2:
		tz += "00"
	case len(tz) == 5 && tz[2] == ':':
		tz = tz[:2] + tz[3:]
	case len(tz) != 4:
		return "", nil, false, fmt.Errorf("bad zone %q", clock[i:])
	}
	hh, mm := digits(tz[:2]), digits(tz[2:])
	if hh < 0 || mm < 0 || hh > 14 || mm > 59 {
		return "", nil, false, fmt.Errorf("bad zone %q", clock[i:])
	}
	off := hh*3600 + mm*60
	if clock[i] == '-' {
		off = -off
	}
	return clock[:i], time.FixedZone("", off), false, nil
}

// digits returns the value of a string of ASCII digits, or -1.
func digits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// rfc1123Layouts are the mail and HTTP date forms, with and without the day name and seconds.
var rfc1123Layouts = []string{
	time.RFC1123, time.RFC1123Z,
	"Mon, 2 Jan 2006 15:04:05 MST", "Mon, 2 Jan 2006 15:04:05 -0700",
	"2 Jan 2006 15:04:05 MST", "2 Jan 2006 15:04:05 -0700",
	"Mon, 2 Jan 2006 15:04 MST", "Mon, 2 Jan 2006 15:04 -0700",
}

// parseRFC1123 reads the RFC 822 family. Zone abbreviations other than UT, GMT and Z are read by
// time.Parse as a zero offset in an invented location, which would be a guess, so they are refused.
func parseRFC1123(v string) (Stamp, bool) {
	for _, layout := range rfc1123Layouts {
		t, err := time.Parse(layout, v)
		if err != nil {
			continue
		}
		if strings.HasSuffix(layout, "MST") {
			name, off := t.Zone()
			if off != 0 || (name != "GMT" && name != "UT" && name != "UTC" && name != "Z") {
				return Stamp{}, false
			}
		}
		prec := PrecisionSecond
		if !strings.Contains(layout, ":05") {
			prec = PrecisionMinute
		}
		return Stamp{At: t.UTC(), Precision: prec}, true
	}
	return Stamp{}, false
}
