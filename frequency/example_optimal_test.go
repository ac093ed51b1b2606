package frequency_test

import (
	"fmt"

	"github.com/strata-crawler/strata/frequency"
)

// From page histories to revisit intervals: estimate each page's change rate, put it in a bucket,
// share a budget of crawls out between the buckets, and turn crawls per period into fr_max.
func ExampleAllocate() {
	histories := map[string][]frequency.Interval{
		"news":    {{1, true}, {1, true}, {1, false}, {1, true}, {1, true}, {1, true}},
		"blog":    {{2, false}, {3, true}, {2, false}, {5, true}, {3, false}},
		"contact": {{7, false}, {7, false}, {14, false}},
	}
	k := frequency.Buckets{N: 16}
	est := frequency.Estimator{Prior: 0.1} // shrink towards the site's mean rate
	pages := map[uint8]int{}
	for _, name := range []string{"news", "blog", "contact"} {
		rate, _ := est.Estimate(histories[name])
		b := k.Of(rate)
		pages[b] += 1000 // pretend each stands for a thousand similar pages
		fmt.Printf("%-7s rate %.3f/run bucket %d\n", name, rate, b)
	}
	var loads []frequency.BucketLoad
	var ids []uint8
	for b := range uint8(k.Len()) {
		if pages[b] > 0 {
			loads = append(loads, frequency.BucketLoad{Pages: pages[b], Rate: k.Rate(b), Weight: 1})
			ids = append(ids, b)
		}
	}
	const T = 7                 // a period of 7 runs
	budget := float64(1000 * T) // 1000 crawls per run
	x := frequency.Allocate(loads, budget, 1, T, T)
	for i, b := range ids {
		fmt.Printf("bucket %d: %d crawls per %d runs, fr_max %d\n", b, x[i], T, frequency.FrMaxFor(x[i], T))
	}
	// Output:
	// news    rate 0.943/run bucket 11
	// blog    rate 0.146/run bucket 8
	// contact rate 0.027/run bucket 5
	// bucket 5: 1 crawls per 7 runs, fr_max 7
	// bucket 8: 2 crawls per 7 runs, fr_max 4
	// bucket 11: 4 crawls per 7 runs, fr_max 2
}
