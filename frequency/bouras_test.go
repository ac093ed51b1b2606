package frequency

import (
	"math/big"
	"slices"
	"sync"
	"testing"
)

// hist builds n successful records of runs 1..n; changed(i) says whether record i (0-based) is a
// change. The first record is never a change, whatever changed says.
func hist(n int, changed func(i int) bool) []Record {
	h := make([]Record, n)
	for i := range h {
		h[i] = Record{Run: int64(i + 1), Changed: i > 0 && changed(i)}
	}
	return h
}

func always(int) bool { return true }
func never(int) bool  { return false }

// lastChanges returns a changed func for n records where exactly k of the last w are changes, spread
// from the newest backwards every (w/k)-th record, and every older record (but the first) is a change.
func lastChanges(n, w, k int) func(int) bool {
	return func(i int) bool {
		if i < n-w {
			return true
		}
		if k == 0 {
			return false
		}
		j := n - 1 - i // 0 = newest
		return j%(w/k) == 0 && j/(w/k) < k
	}
}

func count(h []Record, from int) (changes int) {
	for _, r := range h[from:] {
		if r.Changed && !r.Failed {
			changes++
		}
	}
	return changes
}

func TestBourasPaperExamples(t *testing.T) {
	tests := []struct {
		name        string
		bouras      Bouras
		frMax       int
		history     []Record
		wantX       int
		wantCounter int
		want        int
	}{
		{
			// Section 3.2: 45 records, fr_max 3, limit 20, 10 changes in the last 20 crawls:
			// x = 20, b = 20/10 = 2, (3+2)/2 = 2.5 -> 2. The 24 older changes are outside the window.
			name: "section 3.2: 45 records, limit 20, 10 changes", bouras: Bouras{Limit: 20},
			frMax: 3, history: hist(45, lastChanges(45, 20, 10)), wantX: 20, wantCounter: 10, want: 2,
		},
		{
			// Table 2, page 1: 10 crawls, the size changed at 9 of them (every crawl after the first):
			// b = 10/9, (2 + 1.11)/2 = 1.56 -> 1.
			name: "table 2 page 1: 9 changes in 10 crawls", frMax: 2,
			history: hist(10, always), wantX: 10, wantCounter: 9, want: 1,
		},
		{
			name: "table 2 page 1 in a longer history", frMax: 2,
			history: hist(25, lastChanges(25, 10, 9)), wantX: 10, wantCounter: 9, want: 1,
		},
		{
			// Table 2, page 2: 1 change in 10 crawls: b = 10/1 = 10, (2+10)/2 = 6.
			name: "table 2 page 2: 1 change in 10 crawls", frMax: 2,
			history: hist(10, func(i int) bool { return i == 5 }), wantX: 10, wantCounter: 1, want: 6,
		},
		{
			name: "table 2 page 2 in a longer history", frMax: 2,
			history: hist(40, lastChanges(40, 10, 1)), wantX: 10, wantCounter: 1, want: 6,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit, _, _ := tt.bouras.params()
			x, counter := window(tt.history, limit)
			if x != tt.wantX || counter != tt.wantCounter {
				t.Fatalf("window = x %d, counter %d; want x %d, counter %d", x, counter, tt.wantX, tt.wantCounter)
			}
			if got := tt.bouras.NextFrMax(Page{FrMax: tt.frMax, History: tt.history}); got != tt.want {
				t.Errorf("NextFrMax = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestBourasWindow(t *testing.T) {
	ok := Record{}
	ch := Record{Changed: true}
	fail := Record{Failed: true}
	failCh := Record{Failed: true, Changed: true}
	tests := []struct {
		name        string
		limit       int
		history     []Record
		wantX       int
		wantCounter int
	}{
		{"empty", 10, nil, 0, 0},
		{"all failed", 10, []Record{fail, failCh, fail}, 0, 0},
		{"shorter than limit", 10, []Record{ok, ch, ok}, 3, 1},
		{"first record of the window counts", 3, []Record{ok, ok, ch, ok, ok}, 3, 1},
		{"record before the window does not count", 3, []Record{ok, ch, ok, ok, ok}, 3, 0},
		{"every record of the window changed", 3, []Record{ok, ch, ch, ch}, 3, 3},
		{"failed records do not count towards x", 3, []Record{ch, ok, fail, ch, fail, fail, ok}, 3, 1},
		{"window reaches back past failures", 3, []Record{ch, ch, ok, fail, fail, ok}, 3, 1},
		{"Changed on a failed record is ignored", 10, []Record{ok, failCh, ch, failCh}, 2, 1},
		{"limit 1", 1, []Record{ok, ok, ch}, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, counter := window(tt.history, tt.limit)
			if x != tt.wantX || counter != tt.wantCounter {
				t.Errorf("window = x %d, counter %d; want x %d, counter %d", x, counter, tt.wantX, tt.wantCounter)
			}
		})
	}
}

func TestBourasNextFrMax(t *testing.T) {
	fail := Record{Failed: true}
	tests := []struct {
		name    string
		bouras  Bouras
		frMax   int
		history []Record
		want    int
	}{
		{"no records: unchanged", Bouras{}, 7, nil, 7},
		{"all failed: unchanged", Bouras{}, 7, []Record{fail, fail, {Failed: true, Changed: true}}, 7},
		{"no records, stored fr_max above Max: clamped", Bouras{Max: 5}, 9, nil, 5},
		{"no records, stored fr_max 0: Min", Bouras{}, 0, nil, 1},
		{"no records, negative fr_max: Min", Bouras{Min: 2}, -4, nil, 2},
		{"one record: b = 1", Bouras{}, 5, hist(1, never), 3},
		{"3 records, no change: b = x = 3", Bouras{}, 10, hist(3, never), 6},
		{"3 records, no change, from 1", Bouras{}, 1, hist(3, never), 2},
		{"3 records, 2 changes: b = 1.5", Bouras{}, 4, hist(3, always), 2},
		{"10 records, no change: b = 10", Bouras{}, 2, hist(10, never), 6},
		{"changes every crawl: b = 1", Bouras{}, 30, hist(50, always), 15},
		{"b = 10/3 floors exactly: (5 + 3.33)/2 = 4.17", Bouras{}, 5, hist(20, lastChanges(20, 10, 3)), 4},
		{"b = 10/4 = 2.5: (3 + 2.5)/2 = 2.75", Bouras{}, 3, hist(20, lastChanges(20, 10, 4)), 2},
		{"b = 10/4 = 2.5: (4 + 2.5)/2 = 3.25", Bouras{}, 4, hist(20, lastChanges(20, 10, 4)), 3},
		{"b = 10/3: (4 + 3.33)/2 = 3.67", Bouras{}, 4, hist(20, lastChanges(20, 10, 3)), 3},
		{"clamped to Max", Bouras{Limit: 100, Max: 30}, 30, hist(200, never), 30},
		{"clamped to Min", Bouras{Min: 3}, 3, hist(50, always), 3},
		{"stored fr_max above Max is clamped first", Bouras{Max: 10}, 30, hist(10, never), 10},
		{"Max below Min: Max taken as Min", Bouras{Min: 5, Max: 2}, 9, hist(10, always), 5},
		{"failures skipped", Bouras{}, 2, append(hist(10, never), fail, fail, fail), 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := slices.Clone(tt.history)
			if got := tt.bouras.NextFrMax(Page{FrMax: tt.frMax, History: tt.history}); got != tt.want {
				t.Errorf("NextFrMax = %d, want %d", got, tt.want)
			}
			if !slices.Equal(h, tt.history) {
				t.Error("NextFrMax modified the history")
			}
		})
	}
}

// TestBourasConvergence iterates the rule on a steady history: fr_max after each recalculation.
func TestBourasConvergence(t *testing.T) {
	tests := []struct {
		name    string
		bouras  Bouras
		start   int
		history []Record
		want    []int
	}{
		{"changes every crawl, from 30", Bouras{}, 30, hist(30, always), []int{15, 8, 4, 2, 1, 1, 1}},
		{"changes every crawl, from 9", Bouras{}, 9, hist(30, always), []int{5, 3, 2, 1, 1}},
		{"changes every crawl, from 1", Bouras{}, 1, hist(30, always), []int{1, 1, 1}},
		{"2 records, the second a change: b = 2", Bouras{}, 12, hist(2, always), []int{7, 4, 3, 2, 2}},
		// floor((f + 10) / 2) has two fixed points, 9 and 10: from below the rule stops at 9.
		{"never changes, limit 10, from 1", Bouras{}, 1, hist(30, never), []int{5, 7, 8, 9, 9, 9}},
		{"never changes, limit 10, from 30", Bouras{}, 30, hist(30, never), []int{20, 15, 12, 11, 10, 10}},
		{"never changes, limit 60: reaches Max and stays", Bouras{Limit: 60}, 1, hist(80, never), []int{30, 30, 30}},
		{"never changes, limit 40: reaches Max", Bouras{Limit: 40}, 1, hist(80, never), []int{20, 30, 30, 30}},
		{"never changes, Max 6 below the fixed point", Bouras{Max: 6}, 1, hist(30, never), []int{5, 6, 6}},
		{"one change in 10", Bouras{}, 1, hist(30, lastChanges(30, 10, 1)), []int{5, 7, 8, 9, 9}},
		{"one change in 2", Bouras{}, 12, hist(30, lastChanges(30, 10, 5)), []int{7, 4, 3, 2, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := tt.start
			var got []int
			for range tt.want {
				fr = tt.bouras.NextFrMax(Page{FrMax: fr, History: tt.history})
				got = append(got, fr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("fr_max sequence = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestBourasRuns simulates daily runs: fr counts down, a due page is fetched, its record appended and
// its fr_max recalculated. A new page's history grows from one record, so x grows with it.
func TestBourasRuns(t *testing.T) {
	tests := []struct {
		name        string
		changes     func(run int) bool // whether the content changed since the last fetch
		runs        int
		wantFrMax   int
		wantFetches int
	}{
		{"changes every run", func(int) bool { return true }, 100, 1, 100},
		// fr_max after fetch k is floor((fr_max + k) / 2) while k <= 10: 1 1 2 3 4 5 6 7 8 9, then 9.
		// Fetches at runs 1 2 3 5 8 12 17 23 30 38 47, then every 9th run: 28 by run 200.
		{"never changes", func(int) bool { return false }, 200, 9, 28},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b Bouras
			fr, frMax := 0, 1
			var h []Record
			for run := 1; run <= tt.runs; run++ {
				if fr > 0 {
					fr--
				}
				if fr > 0 {
					continue
				}
				h = append(h, Record{Run: int64(run), Changed: len(h) > 0 && tt.changes(run)})
				frMax = b.NextFrMax(Page{FrMax: frMax, History: h})
				fr = frMax
			}
			if frMax != tt.wantFrMax || len(h) != tt.wantFetches {
				t.Errorf("after %d runs: fr_max %d after %d fetches, want %d after %d",
					tt.runs, frMax, len(h), tt.wantFrMax, tt.wantFetches)
			}
		})
	}
}

func TestBourasValidate(t *testing.T) {
	tests := []struct {
		name    string
		bouras  Bouras
		wantErr bool
	}{
		{"zero value", Bouras{}, false},
		{"explicit defaults", Bouras{Limit: 10, Min: 1, Max: 30}, false},
		{"Min = Max", Bouras{Min: 4, Max: 4}, false},
		{"negative limit", Bouras{Limit: -1}, true},
		{"negative min", Bouras{Min: -1}, true},
		{"negative max", Bouras{Max: -1}, true},
		{"Min above Max", Bouras{Min: 5, Max: 4}, true},
		{"Min above default Max", Bouras{Min: 31}, true},
		{"Max below default Min", Bouras{Max: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.bouras.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestChangeRatio(t *testing.T) {
	tests := []struct {
		name    string
		history []Record
		limit   int
		want    float64
	}{
		{"no records", nil, 10, 0},
		{"table 2 page 2", hist(10, func(i int) bool { return i == 3 }), 10, 0.1},
		{"table 2 page 1", hist(10, always), 10, 0.9},
		{"default limit", hist(30, lastChanges(30, 10, 5)), 0, 0.5},
		{"all failed", []Record{{Failed: true}}, 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ChangeRatio(tt.history, tt.limit); got != tt.want {
				t.Errorf("ChangeRatio = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBourasConcurrent(t *testing.T) {
	p := Page{FrMax: 3, History: hist(45, lastChanges(45, 20, 10))}
	b := Bouras{Limit: 20}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				if got := b.NextFrMax(p); got != 2 {
					t.Errorf("NextFrMax = %d, want 2", got)
					return
				}
			}
		})
	}
	wg.Wait()
}

// reference is an independent oracle: the formula with exact rational arithmetic over an explicitly
// filtered window.
func reference(b Bouras, p Page) int {
	limit, lo, hi := b.params()
	fr := min(max(p.FrMax, lo), hi)
	var ok []Record
	for _, r := range p.History {
		if !r.Failed {
			ok = append(ok, r)
		}
	}
	x := min(len(ok), limit)
	if x == 0 {
		return fr
	}
	counter := count(ok, len(ok)-x)
	bq := big.NewRat(int64(x), 1)
	if counter > 0 {
		bq = big.NewRat(int64(x), int64(counter))
	}
	sum := new(big.Rat).Add(big.NewRat(int64(fr), 1), bq)
	sum.Quo(sum, big.NewRat(2, 1))
	next := new(big.Int).Quo(sum.Num(), sum.Denom()).Int64() // floor for a non-negative value
	return int(min(max(next, int64(lo)), int64(hi)))
}

func FuzzBouras(f *testing.F) {
	f.Add([]byte{0, 1, 1, 0, 1, 1, 1, 0, 1, 1}, 2, 10, 1, 30)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 2, 10, 1, 30)
	f.Add([]byte{2, 3, 2}, 7, 0, 0, 0)
	f.Add([]byte{}, -5, 3, 2, 4)
	f.Add([]byte{1, 1, 1, 2, 1, 0, 3}, 1<<40, 1, 0, 1<<30)
	f.Fuzz(func(t *testing.T, data []byte, frMax, limit, minFr, maxFr int) {
		// Bounds as config would allow them (positive, 0 = default), shrunk so that the oracle's int64
		// arithmetic is exact; frMax is left wild.
		b := Bouras{Limit: limit & 0xffff, Min: minFr & 0xffff, Max: maxFr & 0xffff}
		h := make([]Record, len(data))
		for i, c := range data { // bit 0: changed, bit 1: failed
			h[i] = Record{Run: int64(i), Changed: c&1 != 0, Failed: c&2 != 0}
		}
		p := Page{FrMax: frMax, History: h}
		_, lo, hi := b.params()
		got := b.NextFrMax(p)
		if got < lo || got > hi || got < 1 {
			t.Fatalf("NextFrMax = %d, outside [%d, %d]", got, lo, hi)
		}
		if again := b.NextFrMax(p); again != got {
			t.Fatalf("NextFrMax not deterministic: %d then %d", got, again)
		}
		if want := reference(b, p); got != want {
			t.Fatalf("NextFrMax = %d, reference %d", got, want)
		}
	})
}

func BenchmarkBourasNextFrMax(b *testing.B) {
	var p Policy = Bouras{}
	page := Page{FrMax: 4, History: hist(10, func(i int) bool { return i%3 == 0 })}
	for b.Loop() {
		page.FrMax = p.NextFrMax(page)
	}
}
