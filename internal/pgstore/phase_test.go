package pgstore_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/frequency"
)

// TestPhaseMatchesGo: the SQL strata_phase that ApplyPlan calls is frequency.Phase of
// frequency.PageKey on every input tried: ASCII and multi-byte URLs, long ones, the empty one,
// runs from 0 to large, intervals from 1 to 1000 (and 0, which Phase reads as 1).
func TestPhaseMatchesGo(t *testing.T) {
	db := open(t)
	rng := rand.New(rand.NewPCG(22, 2))
	var runs, frs []int64
	var urls []string
	for i := range 3000 {
		u := fmt.Sprintf("http://h%d.test/p/%d?q=%x", rng.IntN(50), i, rng.Uint64())
		switch i % 7 {
		case 1:
			u += "/é/日本/😀"
		case 2:
			u = ""
		case 3:
			for range 20 {
				u += "/segment"
			}
		}
		run := rng.Int64N(1000)
		if i%5 == 0 {
			run = rng.Int64N(1 << 40)
		}
		runs, urls, frs = append(runs, run), append(urls, u), append(frs, rng.Int64N(1001))
	}
	rows, err := db.Pool().Query(t.Context(), `SELECT strata_page_key(u), strata_phase(r, u, f)
		FROM unnest($1::bigint[], $2::text[], $3::bigint[]) WITH ORDINALITY AS t (r, u, f, n) ORDER BY n`, runs, urls, frs)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	var key, phase int64
	if _, err := pgx.ForEachRow(rows, []any{&key, &phase}, func() error {
		if want := frequency.PageKey(urls[i]); key != want {
			t.Errorf("strata_page_key(%q) = %d, want %d", urls[i], key, want)
		}
		if want := frequency.Phase(runs[i], frequency.PageKey(urls[i]), int(frs[i])); phase != int64(want) {
			t.Errorf("strata_phase(%d, %q, %d) = %d, want %d", runs[i], urls[i], frs[i], phase, want)
		}
		i++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if i != len(urls) {
		t.Fatalf("%d rows, want %d", i, len(urls))
	}
}
