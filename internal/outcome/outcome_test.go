package outcome

import "testing"

func TestOf(t *testing.T) {
	tests := []struct {
		name  string
		f     Fetch
		kind  Kind
		label string
	}{
		{"first version", Fetch{Status: 200, Stored: true, First: true}, New, "new"},
		{"first version after 404s", Fetch{Status: 200, Stored: true, First: true, Changed: true}, New, "new"},
		{"a change", Fetch{Status: 200, Stored: true, Changed: true}, Changed, "changed 12%"},
		{"new bytes, same words", Fetch{Status: 200, Stored: true}, Unchanged, "new bytes, same words"},
		{"same bytes", Fetch{Status: 200}, Unchanged, "unchanged"},
		{"304", Fetch{Status: 304, NotModified: true}, NotModified, "not modified (304)"},
		{"404", Fetch{Status: 404, Failed: true}, NotFound, "not found (404)"},
		{"410", Fetch{Status: 410}, NotFound, "not found (410)"},
		{"redirect", Fetch{Status: 301}, Redirect, "redirect (301)"},
		{"no response", Fetch{Failed: true}, Error, "error"},
		{"503", Fetch{Status: 503, Failed: true}, Error, "error"},
		{"a 200 the archive refused", Fetch{Status: 200, Failed: true}, Error, "error"},
		{"403", Fetch{Status: 403, Failed: true}, Other, "HTTP 403"},
	}
	var c Counts
	for _, tt := range tests {
		if got := Of(tt.f); got != tt.kind {
			t.Errorf("%s: Of = %q, want %q", tt.name, got, tt.kind)
		}
		if got := Label(tt.f, 0.12); got != tt.label {
			t.Errorf("%s: Label = %q, want %q", tt.name, got, tt.label)
		}
		c.Add(tt.f)
	}
	want := Counts{Fetched: 12, New: 2, Changed: 1, Unchanged: 2, Trivial: 1, NotModified: 1, NotFound: 2, Redirects: 1, Errors: 3, Other: 1}
	if c != want {
		t.Errorf("Counts %+v, want %+v", c, want)
	}
	if sum := c.New + c.Changed + c.Unchanged + c.NotModified + c.NotFound + c.Redirects + c.Errors + c.Other; sum != len(tests) {
		t.Errorf("the kinds add up to %d of %d fetches", sum, len(tests))
	}
}
