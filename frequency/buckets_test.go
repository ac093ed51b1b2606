package frequency

import (
	"math"
	"strings"
	"testing"
)

func TestBucketsOf(t *testing.T) {
	ten := Buckets{N: 4, MinRate: 0.01, MaxRate: 100} // one decade per bucket
	tests := []struct {
		name string
		k    Buckets
		rate float64
		want uint8
	}{
		{"below min", ten, 0.001, 0},
		{"zero", ten, 0, 0},
		{"negative", ten, -1, 0},
		{"NaN", ten, math.NaN(), 0},
		{"min edge", ten, 0.01, 0},
		{"inside bucket 0", ten, 0.05, 0},
		{"just below the 0/1 edge", ten, 0.0999, 0},
		{"inside bucket 1", ten, 0.5, 1},
		{"inside bucket 2", ten, 5, 2},
		{"inside bucket 3", ten, 50, 3},
		{"max edge", ten, 100, 3},
		{"above max", ten, 1e9, 3},
		{"+Inf", ten, math.Inf(1), 3},
		{"defaults: min", Buckets{}, DefaultMinRate, 0},
		{"defaults: max", Buckets{}, DefaultMaxRate, 255},
		// 4 decades over 256 buckets: 64 per decade, so 1e-2 is the lower edge of bucket 64 (give or
		// take rounding at the exact edge), 3.16e-2 the middle of the decade.
		{"defaults: 0.0316", Buckets{}, 0.0316, 95},
		{"defaults: 1", Buckets{}, 1.0001, 192},
		{"one bucket", Buckets{N: 1}, 3, 0},
		{"N above 256 is 256", Buckets{N: 1000}, 1e9, 255},
		{"bad rates mean the defaults", Buckets{MinRate: 5, MaxRate: 1}, 1e9, 255},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.k.Of(tt.rate); got != tt.want {
				t.Errorf("%+v.Of(%v) = %d, want %d", tt.k, tt.rate, got, tt.want)
			}
		})
	}
}

func TestBucketsRate(t *testing.T) {
	ten := Buckets{N: 4, MinRate: 0.01, MaxRate: 100}
	for b, want := range []float64{0.01 * math.Sqrt(10), 0.1 * math.Sqrt(10), math.Sqrt(10), 10 * math.Sqrt(10)} {
		if got := ten.Rate(uint8(b)); relErr(got, want) > 1e-12 {
			t.Errorf("Rate(%d) = %v, want %v", b, got, want)
		}
	}
	if got, want := ten.Rate(200), ten.Rate(3); got != want {
		t.Errorf("Rate beyond N = %v, want the last bucket's %v", got, want)
	}
	if got, want := (Buckets{}).Rate(255), DefaultMinRate*math.Pow(DefaultMaxRate/DefaultMinRate, 255.5/256); relErr(got, want) > 1e-12 {
		t.Errorf("default Rate(255) = %v, want %v", got, want)
	}
}

func TestBucketsRoundTripAndMonotone(t *testing.T) {
	for _, k := range []Buckets{{}, {N: 1}, {N: 2}, {N: 7, MinRate: 1e-4, MaxRate: 1}, {N: 255}, {N: 256, MinRate: 1e-6, MaxRate: 1e3}} {
		n := k.Len()
		prevRate := 0.0
		for b := range n {
			r := k.Rate(uint8(b))
			if got := k.Of(r); int(got) != b {
				t.Errorf("%+v: Of(Rate(%d) = %v) = %d", k, b, r, got)
			}
			if r <= prevRate {
				t.Errorf("%+v: Rate(%d) = %v not above Rate(%d) = %v", k, b, r, b-1, prevRate)
			}
			prevRate = r
		}
		// Of is non-decreasing over a fine log grid spanning beyond both ends, and uses every bucket.
		_, lo, hi := k.params()
		prev, seen := uint8(0), map[uint8]bool{}
		for i := 0; i <= 20000; i++ {
			r := lo / 10 * math.Pow(hi/lo*100, float64(i)/20000)
			b := k.Of(r)
			if b < prev {
				t.Fatalf("%+v: Of(%v) = %d below %d", k, r, b, prev)
			}
			prev, seen[b] = b, true
		}
		if len(seen) != n {
			t.Errorf("%+v: %d of %d buckets used", k, len(seen), n)
		}
	}
}

func TestBucketsValidate(t *testing.T) {
	for _, tt := range []struct {
		k       Buckets
		wantErr string
	}{
		{Buckets{}, ""},
		{Buckets{N: 256, MinRate: 1e-4, MaxRate: 1}, ""},
		{Buckets{N: 257}, "bucket count 257"},
		{Buckets{N: -1}, "bucket count -1"},
		{Buckets{MinRate: math.NaN()}, "min rate NaN"},
		{Buckets{MaxRate: -2}, "max rate -2"},
		{Buckets{MinRate: 10}, "not below max rate"},
	} {
		err := tt.k.Validate()
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%+v.Validate() = %v, want %q", tt.k, err, tt.wantErr)
		}
	}
}
