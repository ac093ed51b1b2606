package change

import (
	"strings"
	"testing"
)

// article is a 300-word news article as page.txt stores it: title, byline,
// paragraphs, a list, and a footer with a timestamp and a visit counter.
const articleTitle = "Riverside library to reopen after two-year renovation"

const articleBody = `By Hannah Okafor, local affairs reporter

The Riverside branch library will reopen to the public next month after a renovation that took almost two years and cost the city 4.8 million euros, nearly a third more than first planned. The council confirmed the date at its meeting on Tuesday evening.

The building, a former tram depot that has housed the library since 1974, was closed when inspectors found that the roof timbers had been weakened by damp. Replacing them turned out to be the smallest part of the job: once the ceilings were opened, the contractors found asbestos insulation and wiring that had not been touched in fifty years.

Visitors will find a very different space. The old reading room has been opened up to the roof, with a mezzanine for quiet study, and the children's library has moved from the basement to the ground floor, next to a new garden. There are forty computers, twice as many as before, and a small recording studio that local groups can book free of charge.

"People have been patient with us, and I think they will be pleased," said the head librarian, Marta Keane. "We kept everything people told us they loved about the old building and fixed almost everything they complained about."

Not everyone is happy. The opening hours will be shorter than before the closure, with the library shut on Mondays, because the budget for staff has not grown with the building. A petition asking the council to restore Monday opening has collected more than two thousand signatures.

What opens when
Ground floor and children's library: from the first day.
Mezzanine and study rooms: two weeks later.
Recording studio: after the summer holidays.

Related: City budget for libraries frozen for a third year`

const articleFooter = `Last updated Wednesday, 14 May 2025 at 10:41 · 1,041 readers · 3 comments`

func articleText(title, body, footer string) string {
	return title + "\n\n" + body + "\n\n" + footer
}

var article300 = articleText(articleTitle, articleBody, articleFooter)

// sub returns s with old replaced by new, which must occur in s.
func sub(t *testing.T, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("test text has no %q", old)
	}
	return strings.Replace(s, old, new, 1)
}

func TestArticleLength(t *testing.T) {
	if n := len(strings.Fields(article300)); n < 280 || n > 360 {
		t.Fatalf("article has %d words, want about 300", n)
	}
}

func TestCompare(t *testing.T) {
	paras := strings.Split(articleBody, "\n\n")
	reordered := append([]string{paras[0], paras[3], paras[1], paras[2]}, paras[4:]...)
	newPara := "The library's old card catalogue, which was found in a storeroom during the works, will be displayed in the entrance hall. Readers who remember using it are invited to a small exhibition on the opening weekend."
	replacement := articleText("Heavy rain closes coastal road for the weekend",
		`Police closed the coastal road between the harbour and the lighthouse on Friday afternoon after heavy rain washed mud and stones across both lanes near the old quarry. Drivers have been told to use the inland route, which adds about twenty minutes to the journey.

Engineers from the roads department said the slope above the road was being monitored and that the road would stay closed at least until Monday morning. Buses on the coastal line are being diverted through the villages.

The weather service expects the rain to ease on Saturday night, but has warned of strong winds along the coast on Sunday. Residents were advised to secure garden furniture and to avoid the harbour wall.`,
		"Last updated Friday, 16 May 2025 at 18:03 · 212 readers")

	cases := []struct {
		name      string
		prev, cur string
		changed   bool
		magLo     float64 // Magnitude range, inclusive
		magHi     float64
		identical bool // equal Hash
	}{
		{name: "identical", prev: article300, cur: article300, identical: true},
		{name: "whitespace only", prev: article300,
			cur:       "  " + strings.ReplaceAll(strings.ReplaceAll(article300, ". ", ".  "), "\n\n", "\n \n\n") + "\n\t",
			identical: true},
		{name: "visit counter", prev: article300, cur: sub(t, article300, "1,041 readers", "1,042 readers")},
		{name: "visit counter gains a digit", prev: article300, cur: sub(t, article300, "1,041 readers", "998 readers")},
		{name: "timestamp", prev: article300, cur: sub(t, article300, "at 10:41", "at 10:42")},
		{name: "date rotation", prev: article300,
			cur: articleText(articleTitle, articleBody, "Last updated Thursday, 15 May 2025 at 09:02 · 1,187 readers · 3 comments")},
		{name: "month rollover", prev: article300,
			cur: articleText(articleTitle, articleBody, "Last updated Sunday, 1st June 2025 at 9:02 · 12,187 readers · 3 comments")},
		{name: "case only", prev: article300, cur: sub(t, article300, articleTitle, strings.ToUpper(articleTitle))},
		{name: "punctuation only", prev: article300, cur: sub(t, article300, "fifty years.", "fifty years!")},
		{name: "paragraphs reordered", prev: article300,
			cur: articleText(articleTitle, strings.Join(reordered, "\n\n"), articleFooter)},
		{name: "number in the text (not a change by design)", prev: article300,
			cur: sub(t, article300, "4.8 million euros", "5.1 million euros")},
		{name: "weekday plural (content)", prev: article300, cur: sub(t, article300, "shut on Mondays", "shut on Sundays"),
			changed: true, magLo: 0.003, magHi: 0.03},
		{name: "weekday swap (not a change by design)", prev: article300,
			cur: sub(t, article300, "on Tuesday evening", "on Monday evening")},
		{name: "one word edited", prev: article300, cur: sub(t, article300, "quiet study", "silent study"),
			changed: true, magLo: 0.003, magHi: 0.03},
		{name: "one sentence edited", prev: article300,
			cur: sub(t, article300, "There are forty computers, twice as many as before, and a small recording studio that local groups can book free of charge.",
				"There are also forty new computers and a quiet room for people who want to work on their own laptops."),
			changed: true, magLo: 0.03, magHi: 0.15},
		{name: "sentences reordered in a paragraph", prev: article300,
			cur: sub(t, article300, "Visitors will find a very different space. The old reading room has been opened up to the roof, with a mezzanine for quiet study,",
				"The old reading room has been opened up to the roof, with a mezzanine for quiet study, visitors will find a very different space, and"),
			changed: true, magLo: 0.003, magHi: 0.06},
		{name: "paragraph added", prev: article300,
			cur:     articleText(articleTitle, articleBody+"\n\n"+newPara, articleFooter),
			changed: true, magLo: 0.08, magHi: 0.2},
		{name: "paragraph removed", prev: article300,
			cur:     articleText(articleTitle, strings.Join(append(paras[:4:4], paras[5:]...), "\n\n"), articleFooter),
			changed: true, magLo: 0.1, magHi: 0.25},
		{name: "replaced entirely", prev: article300, cur: replacement, changed: true, magLo: 0.9, magHi: 1},
		{name: "short page, one word", prev: "Welcome to Alder Street Bakery",
			cur: "Welcome to Alder Road Bakery", changed: true, magLo: 0.3, magHi: 1},
		{name: "short page, date only", prev: "Alder Street Bakery\n\nOpen today, Monday 12 May, 7:00-18:00",
			cur: "Alder Street Bakery\n\nOpen today, Tuesday 13 May, 7:30-18:00"},
		{name: "empty to text", prev: "", cur: article300, changed: true, magLo: 1, magHi: 1},
		{name: "text to empty", prev: article300, cur: "", changed: true, magLo: 1, magHi: 1},
		{name: "empty to empty", prev: "", cur: "\n\n  \n", identical: true},
		{name: "punctuation-only page", prev: "", cur: "— · —"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prev, cur := Summarize(tc.prev), Summarize(tc.cur)
			if got := prev.Hash == cur.Hash; got != tc.identical {
				t.Errorf("equal hashes = %v, want %v", got, tc.identical)
			}
			for _, md := range []int{0, 3} {
				r := Compare(prev, cur, Options{MinDistance: md})
				t.Logf("MinDistance %d: %+v (exact magnitude %.3f)", md, r, exactMagnitude(tc.prev, tc.cur))
				if md == 0 && r.Changed != tc.changed {
					t.Errorf("Changed = %v, want %v", r.Changed, tc.changed)
				}
				if !tc.changed && r.Changed {
					t.Errorf("MinDistance %d: changed", md)
				}
				if r.Magnitude < tc.magLo || r.Magnitude > tc.magHi {
					t.Errorf("Magnitude = %.4f, want %.3f..%.3f", r.Magnitude, tc.magLo, tc.magHi)
				}
				if (r.Magnitude > 0) != tc.changed {
					t.Errorf("Magnitude %.4f with Changed %v", r.Magnitude, tc.changed)
				}
				if !tc.changed && r.Distance != 0 {
					t.Errorf("Distance %d for an unchanged text", r.Distance)
				}
				if rr := Compare(cur, prev, Options{MinDistance: md}); rr != r {
					t.Errorf("not symmetric: %+v, reversed %+v", r, rr)
				}
			}
		})
	}
}

// TestShortTextsAreExact: below ShortShingles any change of words is a
// change, whatever the threshold.
func TestShortTextsAreExact(t *testing.T) {
	pairs := [][2]string{
		{"Welcome to Alder Street Bakery", "Welcome to Alder Road Bakery"},
		{"Closed for holidays", "Open"},
		{"Page not found", "Page found"},
		{"Sold out", "In stock"},
		{"Opening hours\n\nMonday to Friday 7:00-18:00\nSaturday 8:00-13:00\n\nSunday closed",
			"Opening hours\n\nMonday to Friday 7:00-18:00\nSaturday 8:00-13:00\n\nSunday open"},
	}
	for _, p := range pairs {
		a, b := Summarize(p[0]), Summarize(p[1])
		for _, md := range []int{0, 3, 10, 64} {
			if r := Compare(a, b, Options{MinDistance: md}); !r.Changed || r.Magnitude <= 0 {
				t.Errorf("%q -> %q, MinDistance %d: %+v", p[0], p[1], md, r)
			}
		}
	}
}

// TestMinDistance: a long article with one edited word is a change by
// default and not one when the threshold is above the distance.
func TestMinDistance(t *testing.T) {
	s := newSynth(7)
	a := s.article(2000)
	prev, cur := Summarize(a.String()), Summarize(s.editWord(a).String())
	r := Compare(prev, cur, Options{})
	if !r.Changed {
		t.Fatalf("one word in 2,000: %+v", r)
	}
	if rr := Compare(prev, cur, Options{MinDistance: r.Distance + 1}); rr.Changed || rr.Magnitude != r.Magnitude || rr.Distance != r.Distance {
		t.Errorf("MinDistance %d: %+v", r.Distance+1, rr)
	}
	if rr := Compare(prev, cur, Options{MinDistance: r.Distance}); !rr.Changed {
		t.Errorf("MinDistance %d: %+v", r.Distance, rr)
	}
}
