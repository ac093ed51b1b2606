package change

// This file keeps Summarize as it was before its loop was rewritten for speed (issue 19),
// as oldSummarize, to check that the rewrite gives the same digest on every input.

import (
	"crypto/sha256"
	"encoding/hex"
	"math/bits"
	"sync"
	"unicode"
	"unicode/utf8"
)

// oldSummarize returns the digest of a page text (page.txt: blocks separated by
// blank lines). It accepts any string, invalid UTF-8 included, and is safe
// for concurrent use. Its time is linear in the text: 6 to 12 ns a byte.
func oldSummarize(text string) Digest {
	s := oldSummerPool.Get().(*oldSummer)
	defer oldSummerPool.Put(s)
	s.reset(len(text))
	s.scan(text)

	var d Digest
	sum := sha256.Sum256(s.buf)
	d.Hash = hex.EncodeToString(sum[:16])
	d.Norm = s.norm
	d.Lines = s.lines
	d.Shingles = s.setN
	d.Sim = s.simhash()
	for i, m := range s.mins {
		if m != oldEmptyBin {
			d.Sketch[i] = 1 + byte(oldFmix64(m)%255)
		}
	}
	return d
}

// Character classes of the tokenizer.
const (
	oldClSep    = iota // punctuation, controls, invalid bytes: ends a word
	oldClSpace         // white space but "\n"
	oldClNL            // "\n": ends a line; a blank line ends a block
	oldClWord          // letters, marks, non-decimal numbers
	oldClDigit         // decimal digits
	oldClSingle        // a word by itself: symbols, characters of unspaced scripts
	oldClIgnore        // invisible: format characters, variation selectors
)

var oldAsciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch {
		case c == '\n':
			t[c] = oldClNL
		case c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r':
			t[c] = oldClSpace
		case c >= '0' && c <= '9':
			t[c] = oldClDigit
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			t[c] = oldClWord
		default:
			t[c] = oldClSep
		}
	}
	return t
}()

// unspaced are the scripts written without spaces between words: each of
// their characters is a word.
var oldUnspaced = []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana,
	unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar}

// classOf classifies a non-ASCII rune.
func oldClassOf(r rune) uint8 {
	switch {
	case r == utf8.RuneError:
		return oldClSep
	case unicode.IsSpace(r):
		return oldClSpace
	case unicode.IsDigit(r):
		return oldClDigit
	case unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r):
		return oldClIgnore // "infor\u00admation" is "information", "❤️" is "❤"
	case unicode.In(r, oldUnspaced...):
		return oldClSingle
	case unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r):
		return oldClWord
	case unicode.Is(unicode.So, r):
		return oldClSingle
	}
	return oldClSep
}

// joinsNumber reports whether r may stand between two digit runs of one
// number: "1,041", "10:41", "12.05.2026", "2020–2024", "1 041".
func oldJoinsNumber(r rune) bool {
	switch r {
	case '.', ',', ':', '/', '\'', '-', ' ', '\u00a0', '\u2009', '\u202f', '\u2019', '\u2013':
		return true
	}
	return false
}

// digitAt reports whether text has a decimal digit at i.
func oldDigitAt(text string, i int) bool {
	if i >= len(text) {
		return false
	}
	if c := text[i]; c < utf8.RuneSelf {
		return c >= '0' && c <= '9'
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return unicode.IsDigit(r)
}

// wordAt reports whether text has a word, digit or single character at i.
func oldWordAt(text string, i int) bool {
	if i >= len(text) {
		return false
	}
	cl := uint8(0)
	if c := text[i]; c < utf8.RuneSelf {
		cl = oldAsciiClass[c]
	} else {
		r, _ := utf8.DecodeRuneInString(text[i:])
		cl = oldClassOf(r)
	}
	return cl == oldClWord || cl == oldClDigit || cl == oldClSingle
}

// ordinalSuffix returns 2 if text has an ordinal suffix (st, nd, rd, th in
// any case) at i that ends the word, else 0.
func oldOrdinalSuffix(text string, i int) int {
	if i+2 > len(text) {
		return 0
	}
	a, b := text[i]|0x20, text[i+1]|0x20
	if !(a == 's' && b == 't' || a == 'n' && b == 'd' || a == 'r' && b == 'd' || a == 't' && b == 'h') {
		return 0
	}
	if oldWordAt(text, i+2) {
		return 0
	}
	return 2
}

// Hashing constants. They are part of the stored format: changing any of
// them changes every digest.
const (
	oldFnvOffset  = 14695981039346656037
	oldFnvPrime   = 1099511628211
	oldSingleSeed = 0x6a09e667f3bcc909 // offset of single-character words
	oldNumWord    = 0x3c6ef372fe94f82b // the word every number becomes
	oldCalWord    = 0xa54ff53a5f1d36f1 // the word month and weekday names become
	oldBlockSeed  = 0x510e527fade682d1
	oldNormSeed   = 0x9b05688c2b3e6c1f
	oldShingle3   = 0x1f83d9abfb41bd6b
	oldShingle2   = 0x5be0cd19137e2179
	oldShingle1   = 0xcbbb9d5dc1059ed8
	oldBlockMul   = 0x9e3779b97f4a7c15
)

// fmix64 is MurmurHash3's 64-bit finaliser: every input bit affects every
// output bit.
func oldFmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// shingleK is the number of words in a shingle.
const oldShingleK = 3

const oldEmptyBin = ^uint64(0)

// summer holds the state of one Summarize call; summers are pooled.
type oldSummer struct {
	buf []byte // the text with white space collapsed, for Hash

	// the word being read
	kind uint8  // 0, clWord or clDigit
	wh   uint64 // FNV-1a of its lower-cased bytes
	wn   int    // its length in bytes

	// the block being read
	win [oldShingleK - 1]uint64 // its last two words
	bn  int                     // its number of words
	bh  uint64                  // hash of its word sequence

	norm        uint64
	lines       int
	lineContent bool // the current line has a non-space character

	// simhash: acc holds 64 byte-wide bit counters (8 per uint64), flushed
	// into cnt every 255 shingles, before they can overflow
	acc   [8]uint64
	accN  int
	cnt   [64]uint64
	total uint64

	mins [SketchSize]uint64 // per bin, the least hash (without the bin bits)
	set  []uint64           // open-addressing set of shingle hashes, 0 = free
	setN int
}

var oldSummerPool = sync.Pool{New: func() any { return new(oldSummer) }}

// reset prepares s for a text of n bytes.
func (s *oldSummer) reset(n int) {
	buf, set := s.buf, s.set
	*s = oldSummer{buf: buf[:0], bh: oldBlockSeed, norm: oldNormSeed}
	for i := range s.mins {
		s.mins[i] = oldEmptyBin
	}
	// A shingle per word, a word per 6 bytes or so; the set grows if not.
	want := 64
	for want < n/3 && want < 1<<22 {
		want <<= 1
	}
	if cap(set) >= want && cap(set) <= 4*want {
		s.set = set[:want]
		clear(s.set)
	} else {
		s.set = make([]uint64, want)
	}
}

// scan reads the words, lines and blocks of text, and collects the text
// with white space collapsed in s.buf: each maximal run of non-space
// characters (unicode.IsSpace, as strings.Fields) is a field, fields are
// joined by one space.
func (s *oldSummer) scan(text string) {
	field := -1 // start of the current field, or -1 between fields
	// text[pend0:pend1] is a run of fields joined by single spaces, already
	// collapsed, not yet copied to s.buf
	pend0, pend1 := -1, -1
	endField := func(end int) {
		if pend0 >= 0 && field == pend1+1 && text[pend1] == ' ' {
			pend1 = end
			return
		}
		s.addField(text, pend0, pend1)
		pend0, pend1 = field, end
	}
	for i := 0; i < len(text); {
		c, w := text[i], 1
		var cl uint8
		var r rune
		if c < utf8.RuneSelf {
			cl, r = oldAsciiClass[c], rune(c)
		} else {
			r, w = utf8.DecodeRuneInString(text[i:])
			cl = oldClassOf(r)
		}
		if cl == oldClSpace || cl == oldClNL {
			if field >= 0 {
				endField(i)
				field = -1
			}
		} else {
			s.lineContent = true
			if field < 0 {
				field = i
			}
		}
		switch cl {
		case oldClWord:
			if s.kind == oldClDigit {
				if n := oldOrdinalSuffix(text, i); n > 0 {
					i += n
					continue
				}
				s.endWord()
			}
			if s.kind == 0 {
				s.kind, s.wh, s.wn = oldClWord, oldFnvOffset, 0
			}
			if c < utf8.RuneSelf {
				// The rest of the word's ASCII letters at once.
				h, j := s.wh, i
				for ; j < len(text); j++ {
					c := text[j]
					if c >= utf8.RuneSelf || oldAsciiClass[c] != oldClWord {
						break
					}
					h = (h ^ uint64(c|0x20)) * oldFnvPrime
				}
				s.wh, s.wn = h, s.wn+j-i
				i = j
				continue
			}
			var b [utf8.UTFMax]byte
			n := utf8.EncodeRune(b[:], unicode.ToLower(r))
			for _, c := range b[:n] {
				s.wh = (s.wh ^ uint64(c)) * oldFnvPrime
			}
			s.wn += n
		case oldClDigit:
			if s.kind == oldClWord {
				s.endWord()
			}
			s.kind = oldClDigit
		case oldClSingle:
			s.endWord()
			h := uint64(oldSingleSeed)
			for j := i; j < i+w; j++ {
				h = (h ^ uint64(text[j])) * oldFnvPrime
			}
			s.word(oldFmix64(h))
		case oldClSep, oldClSpace:
			if s.kind == oldClDigit && oldJoinsNumber(r) && oldDigitAt(text, i+w) {
				break // "1,041": one number
			}
			s.endWord()
		case oldClIgnore:
		case oldClNL:
			s.endWord()
			if s.lineContent {
				s.lines++
			} else {
				s.endBlock()
			}
			s.lineContent = false
		}
		i += w
	}
	if field >= 0 {
		endField(len(text))
	}
	s.addField(text, pend0, pend1)
	s.endWord()
	if s.lineContent {
		s.lines++
	}
	s.endBlock()
}

// addField appends text[from:to], fields of the collapsed text, if from >= 0.
func (s *oldSummer) addField(text string, from, to int) {
	if from < 0 {
		return
	}
	if len(s.buf) > 0 {
		s.buf = append(s.buf, ' ')
	}
	s.buf = append(s.buf, text[from:to]...)
}

// endWord ends the word being read, if any.
func (s *oldSummer) endWord() {
	switch s.kind {
	case oldClWord:
		h := oldFmix64(s.wh)
		if s.wn >= oldCalMinLen && s.wn <= oldCalMaxLen && oldIsCalendar(h) {
			h = oldCalWord
		}
		s.word(h)
	case oldClDigit:
		s.word(oldNumWord)
	}
	s.kind = 0
}

// word adds a word (its hash) to the current block.
func (s *oldSummer) word(h uint64) {
	s.bh = (s.bh^h)*oldBlockMul + 1
	s.bh ^= s.bh >> 29
	if s.bn >= oldShingleK-1 {
		s.shingle(oldFmix64(oldShingle3 ^ s.win[0] ^ bits.RotateLeft64(s.win[1], 21) ^ bits.RotateLeft64(h, 42)))
	}
	s.win[0], s.win[1] = s.win[1], h
	s.bn++
}

// endBlock ends the current block: a block of fewer than shingleK words is
// one shingle; the block's word sequence is added to Norm.
func (s *oldSummer) endBlock() {
	switch s.bn {
	case 0:
		return
	case 1:
		s.shingle(oldFmix64(oldShingle1 ^ s.win[1]))
	case 2:
		s.shingle(oldFmix64(oldShingle2 ^ s.win[0] ^ bits.RotateLeft64(s.win[1], 21)))
	}
	s.norm += oldFmix64(s.bh ^ uint64(s.bn))
	s.bn, s.bh = 0, oldBlockSeed
}

// spread[b] has byte i set to bit i of b.
var oldSpread = func() (t [256]uint64) {
	for b := range t {
		for i := range 8 {
			t[b] |= uint64(b>>i&1) << (8 * i)
		}
	}
	return t
}()

// shingle adds one occurrence of a shingle.
func (s *oldSummer) shingle(h uint64) {
	s.total++
	s.acc[0] += oldSpread[byte(h)]
	s.acc[1] += oldSpread[byte(h>>8)]
	s.acc[2] += oldSpread[byte(h>>16)]
	s.acc[3] += oldSpread[byte(h>>24)]
	s.acc[4] += oldSpread[byte(h>>32)]
	s.acc[5] += oldSpread[byte(h>>40)]
	s.acc[6] += oldSpread[byte(h>>48)]
	s.acc[7] += oldSpread[byte(h>>56)]
	if s.accN++; s.accN == 255 {
		s.flush()
	}

	bin, v := h>>(64-oldSketchBits), h&(1<<(64-oldSketchBits)-1)
	s.mins[bin] = min(s.mins[bin], v)

	key := h | 1<<63 // never 0 (two hashes that differ only there count once)
	mask := uint64(len(s.set) - 1)
	for j := key & mask; ; j = (j + 1) & mask {
		switch s.set[j] {
		case 0:
			s.set[j] = key
			if s.setN++; 2*s.setN > len(s.set) {
				s.grow()
			}
			return
		case key:
			return
		}
	}
}

// sketchBits is log2(SketchSize).
const oldSketchBits = 7

// flush moves the byte-wide simhash counters into cnt.
func (s *oldSummer) flush() {
	for j, a := range s.acc {
		for i := range 8 {
			s.cnt[8*j+i] += a >> (8 * i) & 0xff
		}
	}
	s.acc, s.accN = [8]uint64{}, 0
}

// grow doubles the shingle set.
func (s *oldSummer) grow() {
	old := s.set
	s.set = make([]uint64, 2*len(old))
	mask := uint64(len(s.set) - 1)
	for _, k := range old {
		if k == 0 {
			continue
		}
		j := k & mask
		for s.set[j] != 0 {
			j = (j + 1) & mask
		}
		s.set[j] = k
	}
}

// simhash returns the fingerprint: bit i is set when more shingle
// occurrences have bit i set than not.
func (s *oldSummer) simhash() uint64 {
	s.flush()
	var sim uint64
	for i, n := range s.cnt {
		if 2*n > s.total {
			sim |= 1 << i
		}
	}
	return sim
}

// calendarWords are the names of months and weekdays that rotate on pages
// showing the date ("Updated Monday, 12 May"), with am and pm: they all
// become one word. Full names in English, German, French, Spanish, Italian,
// Portuguese and Dutch; abbreviations in English only, because short words
// in other languages collide with common words.
var oldCalendarWords = []string{
	// English
	"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
	"november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
	"dec", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "mon", "tue",
	"tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun", "am", "pm",
	// German
	"januar", "jänner", "februar", "märz", "mai", "juni", "juli", "oktober", "dezember", "montag",
	"dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonnabend", "sonntag",
	// French
	"janvier", "février", "mars", "avril", "juin", "juillet", "août", "septembre", "octobre",
	"novembre", "décembre", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche",
	// Spanish
	"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre",
	"setiembre", "octubre", "noviembre", "diciembre", "lunes", "martes", "miércoles", "jueves",
	"viernes", "sábado", "domingo",
	// Italian
	"gennaio", "febbraio", "aprile", "maggio", "giugno", "luglio", "settembre", "ottobre", "dicembre",
	"lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica",
	// Portuguese
	"janeiro", "fevereiro", "março", "maio", "junho", "julho", "setembro", "outubro", "novembro",
	"dezembro", "segunda", "terça", "quarta", "quinta", "sexta",
	// Dutch
	"januari", "februari", "maart", "mei", "augustus", "maandag", "dinsdag", "woensdag",
	"donderdag", "vrijdag", "zaterdag", "zondag",
}

// calTable is an open-addressing set of the word hashes of calendarWords,
// calBloom a 4,096-bit filter in front of it (bit h>>52).
var (
	oldCalTable [512]uint64
	oldCalBloom [64]uint64
)

var oldCalMinLen, oldCalMaxLen = 1 << 30, 0

func init() {
	for _, w := range oldCalendarWords {
		h := uint64(oldFnvOffset)
		for i := range len(w) {
			h = (h ^ uint64(w[i])) * oldFnvPrime
		}
		h = oldFmix64(h)
		j := h % uint64(len(oldCalTable))
		for oldCalTable[j] != 0 && oldCalTable[j] != h {
			j = (j + 1) % uint64(len(oldCalTable))
		}
		oldCalTable[j] = h
		oldCalBloom[h>>58] |= 1 << (h >> 52 & 63)
		oldCalMinLen, oldCalMaxLen = min(oldCalMinLen, len(w)), max(oldCalMaxLen, len(w))
	}
}

// isCalendar reports whether h is the hash of a calendar word.
func oldIsCalendar(h uint64) bool {
	if oldCalBloom[h>>58]&(1<<(h>>52&63)) == 0 {
		return false
	}
	for j := h % uint64(len(oldCalTable)); oldCalTable[j] != 0; j = (j + 1) % uint64(len(oldCalTable)) {
		if oldCalTable[j] == h {
			return true
		}
	}
	return false
}
