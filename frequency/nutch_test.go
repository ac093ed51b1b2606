package frequency

import (
	"math"
	"testing"
)

func TestNutchNext(t *testing.T) {
	tests := []struct {
		name        string
		n           Nutch
		interval    float64
		changed     bool
		sinceChange float64
		want, wait  float64
	}{
		{"changed: × 0.8", Nutch{}, 10, true, 0, 8, 8},
		{"changed: sinceChange ignored", Nutch{}, 10, true, 50, 8, 8},
		{"unchanged: × 1.4, due 0.3 · delta early", Nutch{}, 10, false, 4, 14, 14 - 1.2},
		{"unchanged: the interval is at least delta", Nutch{}, 10, false, 20, 20, 20 - 6},
		{"sync_delta off", Nutch{SyncDeltaRate: -1}, 10, false, 20, 14, 14},
		{"kept at Min", Nutch{}, 1, true, 0, 1, 1},
		{"kept at Max", Nutch{Max: 12}, 10, false, 1, 12, 12 - 0.3},
		{"no interval yet: Min", Nutch{}, 0, false, 0, 1.4, 1.4},
		{"custom rates", Nutch{IncRate: 0.2, DecRate: 0.5}, 10, true, 0, 5, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, wait := tt.n.Next(tt.interval, tt.changed, tt.sinceChange)
			if math.Abs(next-tt.want) > 1e-9 || math.Abs(wait-tt.wait) > 1e-9 {
				t.Errorf("Next = %v, %v; want %v, %v", next, wait, tt.want, tt.wait)
			}
		})
	}
}

// TestNutchConverges: a page that always changes sinks to Min, one that never does climbs to Max.
func TestNutchConverges(t *testing.T) {
	var n Nutch
	iv := 30.0
	for range 40 {
		iv, _ = n.Next(iv, true, 0)
	}
	if iv != DefaultNutchMin {
		t.Errorf("always changed: interval %v, want %v", iv, DefaultNutchMin)
	}
	since := 0.0
	for range 40 {
		since += iv
		iv, _ = n.Next(iv, false, since)
	}
	if iv != DefaultNutchMax {
		t.Errorf("never changed: interval %v, want %v", iv, DefaultNutchMax)
	}
}

func TestNutchNextFrMax(t *testing.T) {
	rec := func(run int64, changed bool) Record { return Record{Run: run, Changed: changed} }
	tests := []struct {
		name    string
		frMax   int
		history []Record
		want    int
	}{
		{"no record: unchanged", 5, nil, 5},
		{"failed only: unchanged", 5, []Record{{Run: 1, Failed: true}}, 5},
		{"changed: 10 → 8", 10, []Record{rec(1, false), rec(11, true)}, 8},
		{"changed: 2 → 1 (rounding would keep 2)", 2, []Record{rec(1, false), rec(3, true)}, 1},
		{"unchanged: 1 → 2 (rounding would keep 1)", 1, []Record{rec(1, true), rec(2, false)}, 2},
		{"unchanged: 10 → 14", 10, []Record{rec(1, true), rec(11, false)}, 14},
		{"unchanged since run 1: delta 30 sets the floor", 10, []Record{rec(1, true), rec(21, false), rec(31, false)}, 30},
		{"failures skipped", 10, []Record{rec(1, true), rec(11, false), {Run: 12, Failed: true}}, 14},
		{"within the bounds", 29, []Record{rec(1, true), rec(30, false)}, 30},
	}
	n := Nutch{Max: 30}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := n.NextFrMax(Page{FrMax: tt.frMax, History: tt.history}); got != tt.want {
				t.Errorf("NextFrMax = %d, want %d", got, tt.want)
			}
		})
	}
	p, err := New("nutch", WithBounds(1, 30))
	if err != nil || p.Name() != "nutch" {
		t.Fatalf("New(nutch) = %v, %v", p, err)
	}
	if _, err := New("nutch", WithBounds(10, 5)); err == nil {
		t.Error("New(nutch) with min above max: no error")
	}
	for _, bad := range []Nutch{{IncRate: -1}, {DecRate: 1}, {Min: 5, Max: 2}, {SyncDeltaRate: math.NaN()}} {
		if bad.Validate() == nil {
			t.Errorf("Validate(%+v) = nil", bad)
		}
	}
}
