package robots

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/temoto/robotstxt"
)

// The tests in this file do two jobs for github.com/temoto/robotstxt, which the package itself
// does not use (see the package documentation):
//
//   - TestDeviationNN checks that we get right one RFC 9309 rule that temoto v1.1.2 gets wrong,
//     and also checks that temoto still gets it wrong. If a temoto upgrade fixes a deviation,
//     the second check fails to say the package documentation needs updating.
//   - TestDifferentialTemoto checks that we agree with temoto on generated simple files, where
//     temoto is known to follow RFC 9309.

// temotoAllowed asks temoto whether agent may fetch path under body. ok is false when temoto
// could not parse body at all.
func temotoAllowed(t *testing.T, body, agent, path string) (allowed, ok bool) {
	t.Helper()
	data, err := robotstxt.FromString(body)
	if err != nil {
		return false, false
	}
	return data.TestAgent(path, agent), true
}

// checkOurs asserts our answers for body.
func checkOurs(t *testing.T, body string, checks ...verdict) {
	t.Helper()
	r := Parse([]byte(body))
	for _, c := range checks {
		if got := r.Allowed(c.agent, c.path); got != c.allowed {
			t.Errorf("ours: Allowed(%q, %q) = %v, want %v", c.agent, c.path, got, c.allowed)
		}
	}
}

// checkTemotoWrong asserts that temoto answers c wrongly (or cannot parse body), which is why
// we do not use it.
func checkTemotoWrong(t *testing.T, body string, c verdict) {
	t.Helper()
	got, ok := temotoAllowed(t, body, c.agent, c.path)
	if ok && got == c.allowed {
		t.Errorf("temoto now answers Allowed(%q, %q) = %v correctly: update the package documentation",
			c.agent, c.path, got)
	}
}

func TestDeviation01_StrayLineKeepsTheRest(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"rule before the first user-agent", "Disallow: /early\nUser-agent: *\nDisallow: /private\n"},
		{"non-numeric crawl-delay", "User-agent: *\nCrawl-delay: soon\nDisallow: /private\n"},
		{"negative crawl-delay", "User-agent: *\nCrawl-delay: -1\nDisallow: /private\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkOurs(t, tc.body, verdict{"strata", "/private", false}, verdict{"strata", "/early", true})
			if _, err := robotstxt.FromString(tc.body); err == nil {
				t.Error("temoto now keeps a file with a stray line: update the package documentation")
			}
		})
	}
	if _, ok := Parse([]byte(tests[1].body)).CrawlDelay("strata"); ok {
		t.Error("an invalid Crawl-delay was kept")
	}
}

func TestDeviation02_ServerErrorDisallowsAll(t *testing.T) {
	body := []byte("User-agent: *\nAllow: /\n")
	for _, status := range []int{500, 502, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			if FromStatus(status, body).Allowed("strata", "/x") {
				t.Error("ours: a server error allows crawling")
			}
			data, err := robotstxt.FromStatusAndBytes(status, body)
			if err != nil {
				t.Fatalf("temoto: %v", err)
			}
			if !data.FindGroup("strata").Test("/x") {
				t.Error("temoto's FindGroup now disallows after a 5xx: update the package documentation")
			}
		})
	}
}

func TestDeviation03_AgentMatchesExactlyAndOnlyFallsBackWithoutAGroup(t *testing.T) {
	t.Run("no prefix match", func(t *testing.T) {
		body := "User-agent: Foo\nDisallow: /\n"
		c := verdict{"FooBot", "/x", true}
		checkOurs(t, body, c, verdict{"foo", "/x", false})
		checkTemotoWrong(t, body, c)
	})
	t.Run("group without rules does not fall back to star", func(t *testing.T) {
		// Like quxbot in RFC 9309 §5.1: a group with no rules allows everything.
		body := "User-agent: *\nDisallow: /\n\nUser-agent: FooBot\n"
		c := verdict{"FooBot", "/x", true}
		checkOurs(t, body, c, verdict{"OtherBot", "/x", false})
		checkTemotoWrong(t, body, c)
	})
	t.Run("group with an empty rule does not fall back to star", func(t *testing.T) {
		// temoto gets this one right, by accident: it reads the end of the line as the path.
		checkOurs(t, "User-agent: FooBot\nDisallow:\n\nUser-agent: *\nDisallow: /\n",
			verdict{"FooBot", "/x", true}, verdict{"OtherBot", "/x", false})
	})
	t.Run("case-insensitive", func(t *testing.T) {
		checkOurs(t, "User-agent: FOOBOT\nDisallow: /\n", verdict{"foobot", "/x", false}, verdict{"FooBot", "/x", false})
	})
	t.Run("groups for the same agent merge", func(t *testing.T) {
		body := "User-agent: foobot\nDisallow: /a\n\nUser-agent: *\nDisallow: /\n\nUser-agent: FooBot\nDisallow: /b\n"
		checkOurs(t, body, verdict{"foobot", "/a", false}, verdict{"foobot", "/b", false}, verdict{"foobot", "/c", true})
	})
}

func TestDeviation04_CrawlDelayDoesNotSplitAGroup(t *testing.T) {
	t.Run("crawl-delay", func(t *testing.T) {
		body := "User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /\n"
		c := verdict{"a", "/x", false}
		checkOurs(t, body, c, verdict{"b", "/x", false})
		checkTemotoWrong(t, body, c)
		r := Parse([]byte(body))
		for _, agent := range []string{"a", "b"} {
			if d, ok := r.CrawlDelay(agent); !ok || d != 5*time.Second {
				t.Errorf("CrawlDelay(%q) = %v, %v; want 5s, true", agent, d, ok)
			}
		}
	})
	// The other non-rule lines must not split a group either (Google's
	// ID_LineSyntax_Groups_OtherRules).
	for name, line := range map[string]string{
		"sitemap":      "Sitemap: https://a.test/s.xml",
		"unknown line": "Host: a.test",
		"comment":      "# a comment",
		"blank line":   "",
		"junk":         "<p>",
	} {
		t.Run(name, func(t *testing.T) {
			checkOurs(t, "User-agent: a\n"+line+"\nUser-agent: b\nDisallow: /\n", verdict{"a", "/x", false})
		})
	}
}

func TestDeviation05_TieGoesToAllow(t *testing.T) {
	for _, body := range []string{
		"User-agent: *\nDisallow: /page\nAllow: /page\n",
		"User-agent: *\nDisallow: /*.html\nAllow: /page.*\n", // equal octet lengths with wildcards
	} {
		t.Run(body, func(t *testing.T) {
			c := verdict{"strata", "/page.html", true}
			checkOurs(t, body, c)
			if strings.Contains(body, "/page\n") {
				checkTemotoWrong(t, body, c)
			}
		})
	}
}

func TestDeviation06_WildcardsRankByOctetsAndMatchFromTheStart(t *testing.T) {
	t.Run("ranked by the rule's octet length", func(t *testing.T) {
		// "/x/page." is 8 octets and "/*.html" 7, so Allow wins; temoto ranks the Disallow by
		// its regular expression `/.*\.html`, 9 characters.
		body := "User-agent: *\nAllow: /x/page.\nDisallow: /*.html\n"
		c := verdict{"strata", "/x/page.html", true}
		checkOurs(t, body, c, verdict{"strata", "/x/y.html", false})
		checkTemotoWrong(t, body, c)
	})
	t.Run("anchored at the start of the path", func(t *testing.T) {
		body := "User-agent: *\nDisallow: /private*.html\n"
		c := verdict{"strata", "/public/private/a.html", true}
		checkOurs(t, body, c, verdict{"strata", "/private/a.html", false})
		checkTemotoWrong(t, body, c)
	})
	t.Run("dollar anchors the end", func(t *testing.T) {
		checkOurs(t, "User-agent: *\nDisallow: /*.pdf$\n",
			verdict{"strata", "/a.pdf", false}, verdict{"strata", "/a.pdf?x", true}, verdict{"strata", "/a.pdfx", true})
	})
}

func TestDeviation07_DisallowStarDisallowsEverything(t *testing.T) {
	body := "User-agent: *\nDisallow: *\n"
	c := verdict{"strata", "/x", false}
	checkOurs(t, body, c, verdict{"strata", "/", false}, verdict{"strata", "/robots.txt", true})
	checkTemotoWrong(t, body, c)
}

func TestDeviation08_PercentEncodingIsNormalised(t *testing.T) {
	tests := []struct {
		name, rule, path string
	}{
		{"escaped tilde in path", "/~joe", "/%7Ejoe"},
		{"escaped tilde in rule", "/%7ejoe", "/~joe"},
		{"hex case", "/a%3cb", "/a%3Cb"},
		{"UTF-8 in rule, escaped in path", "/\u30c4", "/%E3%83%84"},
		{"escaped in rule, UTF-8 in path", "/%E3%83%84", "/\u30c4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := "User-agent: *\nDisallow: " + tc.rule + "\n"
			c := verdict{"strata", tc.path, false}
			checkOurs(t, body, c)
			checkTemotoWrong(t, body, c)
		})
	}
}

func TestDeviation09_HashStartsACommentAnywhere(t *testing.T) {
	body := "User-agent: *\nDisallow: /foo#bar\nDisallow: /baz# no space\n"
	c := verdict{"strata", "/foo/x", false}
	checkOurs(t, body, c, verdict{"strata", "/baz", false})
	checkTemotoWrong(t, body, c)
}

func TestDeviation10_OnlyMaxSizeBytesAreParsed(t *testing.T) {
	// A Disallow past MaxSize is not read. Comment filler keeps this cheap for temoto too; its
	// cost on wildcard files is what TestPathologicalWildcards and BenchmarkPathological show
	// for us, and is why temoto is never run on them.
	filler := strings.Repeat("# filler line to push the next rule past MaxSize\n", MaxSize/40)
	body := "User-agent: *\nDisallow: /early\n" + filler + "Disallow: /late\n"
	if len(body) <= MaxSize {
		t.Fatalf("test body is only %d bytes", len(body))
	}
	c := verdict{"strata", "/late", true}
	checkOurs(t, body, c, verdict{"strata", "/early", false})
	checkTemotoWrong(t, body, c)
}

// TestDifferentialTemoto generates simple robots.txt files, where temoto follows RFC 9309, and
// checks that both packages give the same answers. The files keep clear of every deviation
// above: plain paths without '*', '$', '#' or escapes; no two rules of a group with the same
// length; distinct agent names none of which is a prefix of another; no empty rules or groups;
// Crawl-delay only after a group's first rule.
func TestDifferentialTemoto(t *testing.T) {
	rng := rand.New(rand.NewPCG(9309, 1))
	agents := []string{"alphabot", "betabot", "gammabot"}
	queried := append([]string{"deltabot"}, agents...)
	segments := []string{"a", "b", "ab", "ba", "x", "page.html", "q"}
	randomPath := func() string {
		var b strings.Builder
		for range rng.IntN(4) {
			b.WriteString("/" + segments[rng.IntN(len(segments))])
		}
		if b.Len() == 0 || rng.IntN(4) == 0 {
			b.WriteString("/")
		}
		if rng.IntN(5) == 0 {
			b.WriteString("?q=" + segments[rng.IntN(len(segments))])
		}
		return b.String()
	}
	const files, pathsPerFile = 400, 12
	compared := 0
	for i := range files {
		var b strings.Builder
		eol := []string{"\n", "\r\n", "\r"}[rng.IntN(3)]
		names := append([]string{"*"}, agents...)
		rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		for len(names) > 0 {
			// One group of one or two agents, or none when the agent is skipped.
			n := min(len(names), 1+rng.IntN(2))
			group := names[:n]
			names = names[n:]
			if rng.IntN(5) == 0 {
				continue
			}
			for _, name := range group {
				fmt.Fprintf(&b, "%s: %s%s", []string{"User-agent", "user-agent", "USER-AGENT"}[rng.IntN(3)], name, eol)
			}
			lengths := map[int]bool{}
			for r := range 1 + rng.IntN(4) {
				p := randomPath()
				if lengths[len(p)] {
					continue
				}
				lengths[len(p)] = true
				fmt.Fprintf(&b, "%s: %s%s", []string{"Allow", "Disallow"}[rng.IntN(2)], p, eol)
				if r == 0 && rng.IntN(3) == 0 {
					fmt.Fprintf(&b, "Crawl-delay: %s%s", []string{"1", "2.5", "10"}[rng.IntN(3)], eol)
				}
			}
			if rng.IntN(3) == 0 {
				b.WriteString("# comment" + eol + eol)
			}
		}
		body := b.String()
		ours := Parse([]byte(body))
		theirs, err := robotstxt.FromString(body)
		if err != nil {
			t.Fatalf("file %d: temoto: %v\n%s", i, err, body)
		}
		for range pathsPerFile {
			path := randomPath()
			for _, agent := range queried {
				compared++
				if got, want := ours.Allowed(agent, path), theirs.TestAgent(path, agent); got != want {
					t.Errorf("file %d: Allowed(%q, %q) = %v, temoto says %v\n%s", i, agent, path, got, want, body)
				}
			}
		}
		for _, agent := range queried {
			got, _ := ours.CrawlDelay(agent)
			if want := theirs.FindGroup(agent).CrawlDelay; got != want {
				t.Errorf("file %d: CrawlDelay(%q) = %v, temoto says %v\n%s", i, agent, got, want, body)
			}
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d answers compared over %d files", compared, files)
}
