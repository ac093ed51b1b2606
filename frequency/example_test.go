package frequency_test

import (
	"fmt"

	"github.com/strata-crawler/strata/frequency"
)

// The paper's example of section 3.2: 45 records, fr_max 3, the last 20 examined, 10 changes among
// them.
func ExampleBouras() {
	history := make([]frequency.Record, 45)
	for i := range history {
		history[i] = frequency.Record{Run: int64(i + 1), Changed: i >= 25 && i%2 == 0}
	}
	p := frequency.Bouras{Limit: 20}
	fmt.Println(p.NextFrMax(frequency.Page{FrMax: 3, History: history}))
	// Output: 2
}

// A due hub that did not change, with 89 % of its children changed (table 2, page 2).
func ExampleSelective() {
	s := frequency.DefaultSelective()
	threshold := 0.40                                               // as stored for the hub
	e := frequency.Evidence{Children: 100, Known: 100, Changed: 89} // frequency.ChildEvidence(childHistories, 10)
	verdict, reason := s.Decide(false, threshold, e)
	fmt.Println(verdict, reason)
	fmt.Printf("next threshold %.4f\n", s.NextThreshold(threshold, e.Ratio()))
	fmt.Println("fr_max", frequency.HubAdjust(6, e.Ratio()))
	// Output:
	// open hub unchanged, 89.0% of children changed >= threshold 40.0%
	// next threshold 0.5225
	// fr_max 3
}

func ExampleNew() {
	p, err := frequency.New("bouras", frequency.WithLimit(10), frequency.WithBounds(1, 30))
	fmt.Println(p.Name(), err)
	_, err = frequency.New("optimal")
	fmt.Println(err)
	// Output:
	// bouras <nil>
	// unknown policy "optimal" (known: bouras, nutch, uniform)
}
