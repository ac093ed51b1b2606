package store

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestRecentEncoding pins the bytes of urls.recent, format 2: databases keep them, so a change
// here is a change of format.
func TestRecentEncoding(t *testing.T) {
	tests := []struct {
		name string
		recs []Record
		blob []byte
	}{
		{"none", nil, []byte{2}},
		{"one run, unchanged", []Record{{Run: 1}}, []byte{2, 0x10}},
		{"changed and failed flags", []Record{{Run: 1, Changed: true}, {Run: 2, Failed: true}, {Run: 3, Changed: true, Failed: true}}, []byte{2, 0x12, 0x11, 0x13}},
		{"outside a run, then back", []Record{{Run: 5}, {Run: 0}, {Run: 6}}, []byte{2, 0x50, 0x48, 0x60}},
		{"same run twice", []Record{{Run: 7}, {Run: 7, Changed: true}}, []byte{2, 0x70, 0x02}},
		{"two-byte delta", []Record{{Run: 16}}, []byte{2, 0x80, 0x02}},
		{"dated", []Record{{Run: 1, Changed: true, Dated: true, Age: 90 * time.Minute}, {Run: 2, Dated: true}}, []byte{2, 0x16, 90, 0x14, 0}},
		{"dated long ago", []Record{{Run: 1, Dated: true, Age: maxRecentAge}}, []byte{2, 0x14, 0xc0, 0xe6, 0xc0, 0x02}},
		{"largest run", []Record{{Run: maxRecentRun - 1}, {Run: 0}}, append(append([]byte{2},
			0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), 0xe8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blob, err := encodeRecent(tt.recs)
			if err != nil || !bytes.Equal(blob, tt.blob) {
				t.Fatalf("encodeRecent = % x, %v; want % x", blob, err, tt.blob)
			}
			got, err := decodeRecent(blob)
			if err != nil || len(got) != len(tt.recs) || len(got) > 0 && !reflect.DeepEqual(got, tt.recs) {
				t.Errorf("decodeRecent = %+v, %v; want %+v", got, err, tt.recs)
			}
		})
	}
}

// TestRecentFormat1 reads the blobs of format 1, which migration 0012 writes in SQL and databases
// older than schema 22 keep: they decode to the same records, undated, and an append rewrites them
// as format 2.
func TestRecentFormat1(t *testing.T) {
	tests := []struct {
		name string
		blob []byte
		recs []Record
	}{
		{"one run, unchanged", []byte{1, 8}, []Record{{Run: 1}}},
		{"changed and failed flags", []byte{1, 10, 9, 11}, []Record{{Run: 1, Changed: true}, {Run: 2, Failed: true}, {Run: 3, Changed: true, Failed: true}}},
		{"outside a run, then back", []byte{1, 40, 36, 48}, []Record{{Run: 5}, {Run: 0}, {Run: 6}}},
		{"two-byte delta", []byte{1, 0x80, 1}, []Record{{Run: 16}}},
		{"largest run", append(append([]byte{1}, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f),
			0xf4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f), []Record{{Run: maxRecentRun - 1}, {Run: 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeRecent(tt.blob)
			if err != nil || !reflect.DeepEqual(got, tt.recs) {
				t.Fatalf("decodeRecent(% x) = %+v, %v; want %+v", tt.blob, got, err, tt.recs)
			}
			next := Record{Run: 9, Dated: true, Age: time.Hour}
			blob, err := appendRecent(tt.blob, next)
			if err != nil || blob[0] != recentFormat {
				t.Fatalf("appendRecent = % x, %v; want format %d", blob, err, recentFormat)
			}
			if got, err := decodeRecent(blob); err != nil || !reflect.DeepEqual(got, append(tt.recs, next)) {
				t.Errorf("after an append: %+v, %v", got, err)
			}
		})
	}
}

// TestAppendRecentKeepsTheLast appends more records than a row keeps and checks the row holds the
// newest RecentCap in order.
func TestAppendRecentKeepsTheLast(t *testing.T) {
	var blob []byte // NULL: a page never fetched
	var all []Record
	for i := range 3 * RecentCap {
		r := Record{Run: int64(i / 2), Changed: i%3 == 0, Failed: i%5 == 0}
		if i%7 == 0 {
			r.Run = 0
		}
		all = append(all, r)
		var err error
		if blob, err = appendRecent(blob, r); err != nil {
			t.Fatal(err)
		}
		got, err := decodeRecent(blob)
		if want := all[max(0, len(all)-RecentCap):]; err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("after %d appends: %+v, %v; want %+v", i+1, got, err, want)
		}
	}
}

func TestEncodeRecentRefusesRuns(t *testing.T) {
	for _, run := range []int64{-1, maxRecentRun} {
		if _, err := encodeRecent([]Record{{Run: run}}); err == nil {
			t.Errorf("encodeRecent accepted run %d", run)
		}
	}
}

// FuzzDecodeRecent: any bytes either decode into runs within range, which encode and decode back to
// the same records, or are refused with errRecent; never a panic.
func FuzzDecodeRecent(f *testing.F) {
	f.Add([]byte{1, 8, 10, 9, 11})
	f.Add([]byte{1, 0x80, 1})
	f.Add([]byte{1, 0x80})
	f.Add([]byte{2})
	f.Add([]byte{1, 4})
	f.Add([]byte{2, 0x16, 90, 0x14, 0})
	f.Add([]byte{2, 0x14})
	f.Add([]byte{2, 0x14, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{3, 0x10})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, blob []byte) {
		recs, err := decodeRecent(blob)
		if err != nil {
			if !errors.Is(err, errRecent) {
				t.Fatalf("decodeRecent(% x): %v does not wrap errRecent", blob, err)
			}
			return
		}
		again, err := encodeRecent(recs)
		if err != nil {
			t.Fatalf("decodeRecent(% x) = %+v, which does not encode: %v", blob, recs, err)
		}
		back, err := decodeRecent(again)
		want := recs[max(0, len(recs)-RecentCap):]
		if err != nil || len(back) != len(want) || len(back) > 0 && !reflect.DeepEqual(back, want) {
			t.Fatalf("decode(encode(%+v)) = %+v, %v", want, back, err)
		}
	})
}
