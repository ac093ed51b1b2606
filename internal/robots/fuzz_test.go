package robots

import (
	"testing"
)

// FuzzParse checks, for any body and path, that parsing and matching never panic, always give
// the same answer, and always allow /robots.txt.
func FuzzParse(f *testing.F) {
	for _, cases := range [][]conformanceCase{rfcCases, googleCases} {
		for _, tc := range cases {
			for _, c := range tc.checks {
				f.Add([]byte(tc.robots), c.path)
			}
		}
	}
	for _, body := range lineEndingFiles {
		f.Add([]byte(body), "/some/path")
	}
	f.Add([]byte("\xEF\xBB\xBFUser-agent: *\nDisallow: /*a*a*a$\n"), "/aaa")
	f.Add([]byte("User-agent: *\nDisallow: %\nAllow: /%zz*\n"), "/%zz%")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		r := Parse(body)
		got := r.Allowed("strata", path)
		if again := Parse(body).Allowed("strata", path); again != got {
			t.Fatalf("Allowed(%q) = %v, then %v", path, got, again)
		}
		if r.Allowed("strata", path) != got {
			t.Fatalf("Allowed(%q) changed on the same Rules", path)
		}
		if !r.Allowed("strata", "/robots.txt") {
			t.Fatal("/robots.txt disallowed")
		}
		// Every agent, including odd ones, gets an answer without panicking.
		for _, agent := range []string{"", "*", "STRATA", path} {
			r.Allowed(agent, path)
			r.CrawlDelay(agent)
		}
		if d, ok := r.CrawlDelay("strata"); ok && d < 0 {
			t.Fatalf("negative crawl delay %v", d)
		}
		r.Sitemaps()
		// Normalising twice changes nothing, so a normalised path matches like the original.
		p := preparePath(path)
		if again := normalise(p, false); again != p {
			t.Fatalf("normalise not idempotent: %q then %q", p, again)
		}
		if r.Allowed("strata", p) != got {
			t.Fatalf("Allowed(%q) = %v but Allowed of its normal form %q differs", path, got, p)
		}
	})
}

// FuzzGlob checks the linear matcher against the quadratic reference matcher.
func FuzzGlob(f *testing.F) {
	f.Add("/a*b*c", true, "/abcbc")
	f.Add("*.gif", true, "/x.gif")
	f.Add("/aa*aa", false, "/aaa")
	f.Add("", false, "")
	f.Fuzz(func(t *testing.T, pattern string, anchored bool, s string) {
		// Keep inputs small: refMatch is quadratic.
		if len(pattern) > 64 || len(s) > 256 {
			return
		}
		if got, want := globMatch(pattern, anchored, s), refMatch(pattern, anchored, s); got != want {
			t.Fatalf("globMatch(%q, %v, %q) = %v, reference says %v", pattern, anchored, s, got, want)
		}
	})
}
