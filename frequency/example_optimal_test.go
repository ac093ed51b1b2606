package frequency_test

import (
	"fmt"

	"github.com/strata-crawler/strata/frequency"
)

// From page histories to revisit intervals: estimate each page's change rate, put it in a bucket,
// and share a budget of crawls per run out between the buckets as revisit intervals.
func ExampleMakePlan() {
	histories := map[string][]frequency.Interval{
		"news":    {{Length: 1, Changed: true}, {Length: 1, Changed: true}, {Length: 1}, {Length: 1, Changed: true}, {Length: 1, Changed: true}, {Length: 1, Changed: true}},
		"blog":    {{Length: 2}, {Length: 3, Changed: true}, {Length: 2}, {Length: 5, Changed: true}, {Length: 3}},
		"contact": {{Length: 7}, {Length: 7}, {Length: 14}},
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
	var groups []frequency.Group
	for b := range uint8(k.Len()) {
		if pages[b] > 0 {
			groups = append(groups, frequency.Group{Bucket: int(b), Pages: pages[b], Rate: k.Rate(b)})
		}
	}
	plan := frequency.MakePlan(groups, frequency.PlanConfig{Budget: 1000, Period: 30, MinCrawls: 1, Buckets: k})
	for _, b := range plan.Buckets {
		fmt.Printf("bucket %d: every %d runs, staleness %.2f\n", b.Bucket, b.FrMax, b.Staleness)
	}
	fmt.Printf("%.0f crawls per run, %.2f of the copies current on average\n", plan.ExpectedPerRun, plan.ExpectedFreshness)
	// Output:
	// news    rate 0.943/run bucket 11
	// blog    rate 0.146/run bucket 8
	// contact rate 0.027/run bucket 5
	// bucket 5: every 6 runs, staleness 0.07
	// bucket 8: every 3 runs, staleness 0.18
	// bucket 11: every 2 runs, staleness 0.48
	// 1000 crawls per run, 0.76 of the copies current on average
}
