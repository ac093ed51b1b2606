package frequency

import (
	"fmt"
	"math"
)

// DefaultBucketCount is the number of change-rate buckets of a zero [Buckets]: one byte per page, as
// in WebFountain.
const DefaultBucketCount = 256

// Buckets groups change rates into at most 256 log-spaced buckets, so that a page's rate fits in one
// byte of its metadata and the optimiser works on buckets of similar pages instead of single pages
// (Edwards, McCurley and Tomlin, section 3).
//
// Bucket b covers the rates [MinRate·q^b, MinRate·q^(b+1)) with q = (MaxRate/MinRate)^(1/N): each
// bucket spans the same ratio q of rates (q ≈ 1.037 with the defaults, 4 decades over 256 buckets), so
// the relative error of a bucket's representative rate is the same everywhere. Rates below MinRate
// (including 0 and NaN) fall into bucket 0, rates at or above MaxRate into bucket N−1.
//
// A zero field means its default (N 256, MinRate 1e-3, MaxRate 10 changes per run); N above 256 is
// taken as 256, a negative or NaN rate as its default, and MaxRate <= MinRate as the defaults for
// both. [Buckets.Validate] reports such settings. Buckets is a value type: its methods are safe for
// concurrent use.
type Buckets struct {
	N       int     // number of buckets, 1 to 256; 0 means DefaultBucketCount
	MinRate float64 // lower edge of bucket 0, changes per run; 0 means DefaultMinRate
	MaxRate float64 // upper edge of bucket N−1, changes per run; 0 means DefaultMaxRate
}

// params returns N, MinRate and MaxRate with the defaults applied, 1 <= n <= 256 and lo < hi.
func (k Buckets) params() (n int, lo, hi float64) {
	n = k.N
	if n <= 0 {
		n = DefaultBucketCount
	}
	n = min(n, 256)
	lo, hi = positive(k.MinRate, DefaultMinRate), positive(k.MaxRate, DefaultMaxRate)
	if !(lo < hi) {
		lo, hi = DefaultMinRate, DefaultMaxRate
	}
	return n, lo, hi
}

// Validate reports settings the methods would have to correct: N outside [0, 256], a negative, NaN
// or infinite rate, or MinRate not below MaxRate once the defaults are applied.
func (k Buckets) Validate() error {
	if k.N < 0 || k.N > 256 {
		return fmt.Errorf("bucket count %d: must be between 1 and 256 (0 means the default, %d)", k.N, DefaultBucketCount)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"min rate", k.MinRate}, {"max rate", k.MaxRate}} {
		if !(f.v >= 0) || math.IsInf(f.v, 1) {
			return fmt.Errorf("bucket %s %v: must be a finite number >= 0 (0 means the default)", f.name, f.v)
		}
	}
	if lo, hi := positive(k.MinRate, DefaultMinRate), positive(k.MaxRate, DefaultMaxRate); lo >= hi {
		return fmt.Errorf("bucket min rate %v is not below max rate %v", lo, hi)
	}
	return nil
}

// Len returns the number of buckets, N with the default applied.
func (k Buckets) Len() int {
	n, _, _ := k.params()
	return n
}

// Of returns the bucket of a change rate: floor(N · log(rate/MinRate) / log(MaxRate/MinRate)), kept
// within [0, N−1]. It is non-decreasing in rate.
func (k Buckets) Of(rate float64) uint8 {
	n, lo, hi := k.params()
	if !(rate > lo) { // also NaN
		return 0
	}
	if rate >= hi {
		return uint8(n - 1)
	}
	f := math.Floor(float64(n) * math.Log(rate/lo) / math.Log(hi/lo))
	return uint8(min(max(int(f), 0), n-1))
}

// Rate returns the representative rate of bucket b, the geometric mid-point of its edges:
// MinRate · (MaxRate/MinRate)^((b + 0.5) / N). A b at or above N counts as N−1. Of(Rate(b)) == b for
// every bucket.
func (k Buckets) Rate(b uint8) float64 {
	n, lo, hi := k.params()
	i := min(int(b), n-1)
	return lo * math.Pow(hi/lo, (float64(i)+0.5)/float64(n))
}
