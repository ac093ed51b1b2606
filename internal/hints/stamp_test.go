package hints_test

import (
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/hints"
)

func TestParseStamp(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	tests := []struct {
		in       string
		at       time.Time
		prec     hints.Precision
		zoneless bool
	}{
		// The W3C profile.
		{"1997", utc(1997, 1, 1, 0, 0, 0, 0), hints.PrecisionYear, true},
		{"1997-07", utc(1997, 7, 1, 0, 0, 0, 0), hints.PrecisionMonth, true},
		{"1997-07-16", utc(1997, 7, 16, 0, 0, 0, 0), hints.PrecisionDay, true},
		{"1997-07-16T19:20+01:00", utc(1997, 7, 16, 18, 20, 0, 0), hints.PrecisionMinute, false},
		{"1997-07-16T19:20:30+01:00", utc(1997, 7, 16, 18, 20, 30, 0), hints.PrecisionSecond, false},
		{"1997-07-16T19:20:30.45+01:00", utc(1997, 7, 16, 18, 20, 30, 450_000_000), hints.PrecisionExact, false},
		{"1997-07-16T19:20:30.45Z", utc(1997, 7, 16, 19, 20, 30, 450_000_000), hints.PrecisionExact, false},
		{"1997-07-16T19:20:30-05:30", utc(1997, 7, 17, 0, 50, 30, 0), hints.PrecisionSecond, false},
		{"  2024-02-29T00:00:00Z \n", utc(2024, 2, 29, 0, 0, 0, 0), hints.PrecisionSecond, false},
		// Wrong forms real sites emit.
		{"2024-05-01T10:30:15", utc(2024, 5, 1, 10, 30, 15, 0), hints.PrecisionSecond, true},
		{"2024-05-01T10:30", utc(2024, 5, 1, 10, 30, 0, 0), hints.PrecisionMinute, true},
		{"2024-05-01 10:30:15+02:00", utc(2024, 5, 1, 8, 30, 15, 0), hints.PrecisionSecond, false},
		{"2024-05-01t10:30:15z", utc(2024, 5, 1, 10, 30, 15, 0), hints.PrecisionSecond, false},
		{"2024-05-01T10:30:15+0200", utc(2024, 5, 1, 8, 30, 15, 0), hints.PrecisionSecond, false},
		{"2024-05-01T10:30:15+02", utc(2024, 5, 1, 8, 30, 15, 0), hints.PrecisionSecond, false},
		{"2024-05-01T10:30:15.5", utc(2024, 5, 1, 10, 30, 15, 500_000_000), hints.PrecisionExact, true},
		{"Wed, 01 May 2024 10:30:15 GMT", utc(2024, 5, 1, 10, 30, 15, 0), hints.PrecisionSecond, false},
		{"Wed, 01 May 2024 10:30:15 +0200", utc(2024, 5, 1, 8, 30, 15, 0), hints.PrecisionSecond, false},
		{"Wed, 1 May 2024 10:30:15 GMT", utc(2024, 5, 1, 10, 30, 15, 0), hints.PrecisionSecond, false},
		{"1 May 2024 10:30:15 -0100", utc(2024, 5, 1, 11, 30, 15, 0), hints.PrecisionSecond, false},
		{"Wed, 01 May 2024 10:30 GMT", utc(2024, 5, 1, 10, 30, 0, 0), hints.PrecisionMinute, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := hints.ParseStamp(tt.in)
			if err != nil {
				t.Fatalf("ParseStamp: %v", err)
			}
			if !got.At.Equal(tt.at) || got.Precision != tt.prec || got.Zoneless != tt.zoneless {
				t.Errorf("got %v %v zoneless=%v, want %v %v zoneless=%v",
					got.At, got.Precision, got.Zoneless, tt.at, tt.prec, tt.zoneless)
			}
			if got.At.Location() != time.UTC {
				t.Errorf("At in %v, want UTC", got.At.Location())
			}
		})
	}
}

func TestParseStampRefuses(t *testing.T) {
	for _, in := range []string{
		"", "   ", "yesterday", "01/05/2024", "2024/05/01", "1714559415", "2024-5-1", "2024-05-1",
		"2024-13-01", "2024-02-30", "2023-02-29", "24-05-01", "2024-05-01T", "2024-05-01T25:00Z",
		"2024-05-01T10:60Z", "2024-05-01T9:30Z", "2024-05-01T10:30:15+2", "2024-05-01T10:30:15+02:0",
		"2024-05-01T10:30:15+15:00", "2024-05-01T10:30:15+02:60", "2024-05-01T10:30:15 PST",
		"2024-05-01T10:30:15.Z", "2024-05-01T10:30:15,5Z", "Wed, 01 May 2024 10:30:15 PST",
		"Wed, 01 May 2024", "2024-05-01T10:30:15ZZ", "2024-00", "2024-05-00",
	} {
		t.Run(in, func(t *testing.T) {
			if got, err := hints.ParseStamp(in); err == nil {
				t.Errorf("ParseStamp(%q) = %+v, want an error", in, got)
			}
		})
	}
}

func TestStampBounds(t *testing.T) {
	tests := []struct {
		in               string
		earliest, latest string
	}{
		{"2024-05-01T10:30:15Z", "2024-05-01T10:30:15Z", "2024-05-01T10:30:16Z"},
		{"2024-05-01T10:30Z", "2024-05-01T10:30:00Z", "2024-05-01T10:31:00Z"},
		{"2024-05-01T10:30:15.25Z", "2024-05-01T10:30:15.25Z", "2024-05-01T10:30:15.25Z"},
		// A date alone names that day in some zone between UTC−12 and UTC+14.
		{"2024-05-01", "2024-04-30T10:00:00Z", "2024-05-02T12:00:00Z"},
		{"2024-02", "2024-01-31T10:00:00Z", "2024-03-01T12:00:00Z"},
		{"2024", "2023-12-31T10:00:00Z", "2025-01-01T12:00:00Z"},
		{"2024-05-01T10:30:15", "2024-04-30T20:30:15Z", "2024-05-01T22:30:16Z"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			st, err := hints.ParseStamp(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			e, l := st.Bounds()
			if e.Format(time.RFC3339Nano) != tt.earliest || l.Format(time.RFC3339Nano) != tt.latest {
				t.Errorf("Bounds = %s, %s; want %s, %s", e.Format(time.RFC3339Nano), l.Format(time.RFC3339Nano),
					tt.earliest, tt.latest)
			}
		})
	}
	if e, l := (hints.Stamp{}).Bounds(); !e.IsZero() || !l.IsZero() {
		t.Errorf("zero Stamp Bounds = %v, %v", e, l)
	}
}

func TestStampString(t *testing.T) {
	for _, in := range []string{"2024", "2024-05", "2024-05-01", "2024-05-01T10:30Z", "2024-05-01T10:30:15Z",
		"2024-05-01T10:30:15.25Z", "2024-05-01T10:30:15", "2024-05-01T10:30"} {
		st, err := hints.ParseStamp(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.String(); got != in {
			t.Errorf("ParseStamp(%q).String() = %q", in, got)
		}
	}
}
