package serve

import (
	"slices"
	"testing"
)

func TestNaturalOrder(t *testing.T) {
	want := []string{"a", "p2", "p9", "p10", "release.0.7", "release.0.07", "release.0.10", "release.1.0", "release.10.0", "x1y", "x1y2", "x01y2"}
	got := []string{"release.0.10", "x01y2", "p10", "release.10.0", "a", "release.0.07", "p9", "x1y2", "release.1.0", "p2", "release.0.7", "x1y"}
	slices.SortFunc(got, natCompare)
	if !slices.Equal(got, want) {
		t.Errorf("natural order:\n got %v\nwant %v", got, want)
	}
	for _, a := range want {
		for _, b := range want {
			if (natCompare(a, b) == 0) != (a == b) || natCompare(a, b) != -natCompare(b, a) {
				t.Errorf("natCompare(%q, %q) = %d, (%q, %q) = %d", a, b, natCompare(a, b), b, a, natCompare(b, a))
			}
		}
	}
}
