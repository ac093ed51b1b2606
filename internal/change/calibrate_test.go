package change

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestCalibration: 200 synthetic articles of 100 sentences (about 1,500
// words) per row, k % of their sentences replaced by new ones. It logs the
// mean Magnitude, the exact value it estimates, its mean absolute error,
// the mean simhash distance and the share reported as changed, and asserts that the mean magnitude
// grows with k and tracks the exact value.
func TestCalibration(t *testing.T) {
	pairs := 200
	if testing.Short() {
		pairs = 40
	}
	s := newSynth(2026)
	var lines []string
	lines = append(lines, "| edited | Magnitude | exact | mean abs error | Distance | changed |",
		"|---|---|---|---|---|---|")
	prev := -1.0
	for _, k := range []int{0, 1, 5, 20, 50, 100} {
		var mag, exact, absErr, dist, changed float64
		for range pairs {
			a := s.articleSentences(100)
			b := s.editSentences(a, k)
			ta, tb := a.String(), b.String()
			r := Compare(Summarize(ta), Summarize(tb), Options{})
			e := exactMagnitude(ta, tb)
			mag += r.Magnitude
			exact += e
			absErr += math.Abs(r.Magnitude - e)
			dist += float64(r.Distance)
			if r.Changed {
				changed++
			}
		}
		n := float64(pairs)
		mag, exact, absErr, dist, changed = mag/n, exact/n, absErr/n, dist/n, changed/n
		lines = append(lines, fmt.Sprintf("| %d %% | %.3f | %.3f | %.3f | %.1f | %.0f %% |",
			k, mag, exact, absErr, dist, 100*changed))
		if mag <= prev && k > 0 {
			t.Errorf("k = %d %%: mean magnitude %.3f not above %.3f", k, mag, prev)
		}
		prev = mag
		if absErr > 0.05 || math.Abs(mag-exact) > 0.03 {
			t.Errorf("k = %d %%: magnitude %.3f, exact %.3f, mean abs error %.3f", k, mag, exact, absErr)
		}
		if want := k > 0; (changed == 1) != want || (changed == 0) == want {
			t.Errorf("k = %d %%: %.0f %% changed", k, 100*changed)
		}
	}
	t.Log("calibration, " + fmt.Sprint(pairs) + " articles of 100 sentences per row:\n" + strings.Join(lines, "\n"))
}

// TestThresholdTradeoff measures what Options.MinDistance costs: the share
// of real edits (one word, one sentence) still reported as changed, for
// articles of 300, 1,000 and 3,000 words. It only logs; it backs the
// numbers in the documentation of Options.
func TestThresholdTradeoff(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	const trials = 300
	thresholds := []int{0, 1, 2, 3, 4, 6, 8, 12}
	s := newSynth(11)
	var lines []string
	head := "| edit | words |"
	for _, th := range thresholds {
		head += fmt.Sprintf(" T=%d |", th)
	}
	lines = append(lines, head, "|---|---|"+strings.Repeat("---|", len(thresholds)))
	for _, edit := range []string{"one word", "one sentence"} {
		for _, words := range []int{300, 1000, 3000} {
			kept := make([]int, len(thresholds))
			for range trials {
				a := s.article(words)
				var b article
				if edit == "one word" {
					b = s.editWord(a)
				} else {
					b = s.editSentences(a, 1)
				}
				da, db := Summarize(a.String()), Summarize(b.String())
				for i, th := range thresholds {
					if Compare(da, db, Options{MinDistance: th}).Changed {
						kept[i]++
					}
				}
			}
			row := fmt.Sprintf("| %s | %d |", edit, words)
			for _, k := range kept {
				row += fmt.Sprintf(" %.0f %% |", 100*float64(k)/trials)
			}
			lines = append(lines, row)
			if kept[0] != trials {
				t.Errorf("%s in %d words: only %d of %d changed with the default", edit, words, kept[0], trials)
			}
		}
	}
	t.Log("share of edits reported as changed, by MinDistance T:\n" + strings.Join(lines, "\n"))
}
