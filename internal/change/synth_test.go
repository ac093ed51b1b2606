package change

import (
	"math/rand/v2"
	"strings"
)

// synth makes deterministic synthetic articles: pseudo-words drawn from a
// Zipf distribution over a 4,000-word vocabulary (so that common words and
// phrases repeat as in real prose), sentences of 6 to 24 words, paragraphs
// of 2 to 6 sentences, one paragraph per line and a blank line between
// paragraphs, as in page.txt.
type synth struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newSynth(seed uint64) *synth {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	syll := []string{"ka", "lo", "mi", "ne", "ru", "ta", "vo", "si", "de", "ha", "po", "gu", "ber", "lin", "tor",
		"an", "el", "is", "om", "ul", "ch", "st", "re", "qua", "zi"}
	seen := map[string]bool{}
	var vocab []string
	for len(vocab) < 4000 {
		var b strings.Builder
		for range 1 + rng.IntN(3) {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] && !isCalendarWord(w) {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return &synth{rng: rng, zipf: rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1)), vocab: vocab}
}

func isCalendarWord(w string) bool {
	for _, c := range calendarWords {
		if c == w {
			return true
		}
	}
	return false
}

// sentence returns a sentence of 6 to 24 words.
func (s *synth) sentence() string {
	n := 6 + s.rng.IntN(19)
	words := make([]string, n)
	for i := range words {
		words[i] = s.vocab[s.zipf.Uint64()]
	}
	words[0] = strings.ToUpper(words[0][:1]) + words[0][1:]
	if n > 10 {
		words[n/2] += ","
	}
	return strings.Join(words, " ") + "."
}

// article is a list of paragraphs, each a list of sentences.
type article [][]string

// article returns an article of at least the given number of words.
func (s *synth) article(words int) article {
	var a article
	for n := 0; n < words; {
		p := make([]string, 2+s.rng.IntN(5))
		for i := range p {
			p[i] = s.sentence()
			n += strings.Count(p[i], " ") + 1
		}
		a = append(a, p)
	}
	return a
}

// articleSentences returns an article of exactly n sentences.
func (s *synth) articleSentences(n int) article {
	var a article
	for n > 0 {
		p := make([]string, min(n, 2+s.rng.IntN(5)))
		for i := range p {
			p[i] = s.sentence()
		}
		a = append(a, p)
		n -= len(p)
	}
	return a
}

func (a article) String() string {
	paras := make([]string, len(a))
	for i, p := range a {
		paras[i] = strings.Join(p, " ")
	}
	return strings.Join(paras, "\n\n")
}

func (a article) clone() article {
	b := make(article, len(a))
	for i, p := range a {
		b[i] = append([]string(nil), p...)
	}
	return b
}

// sentences returns the number of sentences.
func (a article) sentences() int {
	n := 0
	for _, p := range a {
		n += len(p)
	}
	return n
}

// editSentences returns a copy of a with k distinct sentences, chosen at
// random, replaced by new ones.
func (s *synth) editSentences(a article, k int) article {
	b := a.clone()
	n := a.sentences()
	for _, idx := range s.rng.Perm(n)[:k] {
		for pi, p := range b {
			if idx < len(p) {
				b[pi][idx] = s.sentence()
				break
			}
			idx -= len(p)
		}
	}
	return b
}

// editWord returns a copy of a with one word of one sentence replaced by a
// different word.
func (s *synth) editWord(a article) article {
	b := a.clone()
	pi := s.rng.IntN(len(b))
	si := s.rng.IntN(len(b[pi]))
	words := strings.Fields(b[pi][si])
	wi := s.rng.IntN(len(words))
	for {
		w := s.vocab[s.rng.IntN(len(s.vocab))]
		if !strings.EqualFold(strings.Trim(words[wi], ".,"), w) {
			words[wi] = w
			break
		}
	}
	b[pi][si] = strings.Join(words, " ")
	return b
}

// shingleSet returns the distinct shingle hashes of text, for exact
// reference values.
func shingleSet(text string) map[uint64]bool {
	s := new(summer)
	s.reset(len(text))
	s.scan(text)
	set := make(map[uint64]bool, s.setN)
	for _, k := range s.set {
		if k != 0 {
			set[k] = true
		}
	}
	return set
}

// exactMagnitude is what Magnitude estimates: 1 − |A∩B| / max(|A|,|B|).
func exactMagnitude(a, b string) float64 {
	sa, sb := shingleSet(a), shingleSet(b)
	if len(sa) == 0 && len(sb) == 0 {
		return 0
	}
	inter := 0
	for k := range sa {
		if sb[k] {
			inter++
		}
	}
	return 1 - float64(inter)/float64(max(len(sa), len(sb)))
}
