package store

import (
	"hash/maphash"
	"slices"
	"sync"
)

// knownURLs remembers, for the URLs this DB handle has seen in the table, a level the URL's row has
// at least, so that Discover asks SQLite only about the links it has not seen: most links of a page
// are known (a site's navigation is on every page), and the query that looked every one of them up
// was a tenth of a crawl's CPU on 50 KB pages (issue 19).
//
// An entry is only ever a lower bound of what the table holds, so the answer "known at level L" is
// always true of the table, and Discover skips only URLs it would not have written. That holds
// because nothing removes a URL's row or lowers its level (the table only grows, and every write
// to urls.level takes the larger of the two levels), and because an entry is made only from a row
// read from the table or from a write after its transaction committed. What the cache misses (URLs
// added by another process, or a level raised elsewhere) only costs a query.
//
// URLs are kept as 64-bit hashes, with a seed random to the process: two URLs with the same hash
// would make the second one look known, and it would not be added. Among n URLs the odds of any
// such pair are about n²/2⁶⁵: 3·10⁻⁸ for a million URLs, 3·10⁻⁶ for ten million; and the seed
// changes with every process, so a URL lost that way is found by a later run.
//
// The hashes are a sorted slice with a parallel slice of levels (9 bytes a URL: 9 MB for a
// million) and a small map of recent additions, merged into the slices when it grows past a
// quarter of them.
type knownURLs struct {
	seed maphash.Seed

	mu     sync.Mutex
	keys   []uint64 // sorted
	levels []uint8  // levels[i] is keys[i]'s
	recent map[uint64]uint8
}

// mergeAt is the least size of the map of recent additions at which it is merged into the slices.
const mergeAt = 4096

func newKnownURLs() *knownURLs {
	return &knownURLs{seed: maphash.MakeSeed(), recent: map[uint64]uint8{}}
}

func (k *knownURLs) hash(url string) uint64 { return maphash.String(k.seed, url) }

// unknown returns the URLs of found that the cache cannot vouch for: not seen, or seen at a lower
// level than the one found.
func (k *knownURLs) unknown(found []NewURL) []NewURL {
	hashes := make([]uint64, len(found))
	for i, u := range found {
		hashes[i] = k.hash(u.URL)
	}
	var out []NewURL
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, u := range found {
		if level, ok := k.levelLocked(hashes[i]); !ok || level < u.Level {
			out = append(out, u)
		}
	}
	return out
}

func (k *knownURLs) levelLocked(h uint64) (int, bool) {
	if l, ok := k.recent[h]; ok {
		return int(l), true
	}
	if i, ok := slices.BinarySearch(k.keys, h); ok {
		return int(k.levels[i]), true
	}
	return 0, false
}

// note records that the table holds url at level or higher.
func (k *knownURLs) note(url string, level int) {
	if level < 0 || level > 255 {
		return // not kept: such a URL is just looked up every time
	}
	h := k.hash(url)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.noteLocked(h, uint8(level))
}

// noteAll is note for each URL of us at its own level.
func (k *knownURLs) noteAll(us []NewURL) {
	hashes := make([]uint64, len(us))
	for i, u := range us {
		hashes[i] = k.hash(u.URL)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, u := range us {
		if u.Level >= 0 && u.Level <= 255 {
			k.noteLocked(hashes[i], uint8(u.Level))
		}
	}
}

func (k *knownURLs) noteLocked(h uint64, level uint8) {
	if i, ok := slices.BinarySearch(k.keys, h); ok {
		k.levels[i] = max(k.levels[i], level)
		return
	}
	if l, ok := k.recent[h]; ok && l >= level {
		return
	}
	k.recent[h] = level
	if len(k.recent) >= max(mergeAt, len(k.keys)/4) {
		k.mergeLocked()
	}
}

// mergeLocked moves the recent additions into the sorted slices.
func (k *knownURLs) mergeLocked() {
	add := make([]uint64, 0, len(k.recent))
	for h := range k.recent {
		add = append(add, h)
	}
	slices.Sort(add)
	keys := make([]uint64, 0, len(k.keys)+len(add))
	levels := make([]uint8, 0, cap(keys))
	i := 0
	for _, h := range add {
		for i < len(k.keys) && k.keys[i] < h {
			keys, levels = append(keys, k.keys[i]), append(levels, k.levels[i])
			i++
		}
		keys, levels = append(keys, h), append(levels, k.recent[h])
	}
	keys, levels = append(keys, k.keys[i:]...), append(levels, k.levels[i:]...)
	k.keys, k.levels = keys, levels
	clear(k.recent)
}
