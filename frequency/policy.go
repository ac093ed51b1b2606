package frequency

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Record is one fetch of a page, oldest first in a History (the paper's "records of a page": one row
// of the fetches table).
type Record struct {
	// Run is the run the fetch belongs to. Bouras ignores it (it counts records, not runs); policies
	// that reason about elapsed time use it.
	Run int64
	// Changed reports that the content differed from the previous successful record's. The first
	// record of a page is never a change, and neither is a 304 Not Modified answer.
	Changed bool
	// Failed marks a fetch without a usable response (no response, a server error, an aborted body):
	// it is not evidence about change, and policies skip it. Its Changed is ignored.
	Failed bool
	// Dated reports that the page's server dated its last change at this fetch, and that the date
	// is to be believed (its Last-Modified header, checked against what strata saw of the page and
	// its site); Age is then the time from that change to the fetch, in runs. A dated change says
	// when the page changed, not only whether: one such fetch tells a page that changes daily from
	// one that changes monthly, which takes a dozen undated visits.
	Dated bool
	Age   float64
}

// Page is what a policy knows about one page when it recalculates its interval.
type Page struct {
	// FrMax is the page's current revisit interval in runs.
	FrMax int
	// History holds the page's records, oldest first. It must include at least the last Limit
	// successful records when the page has that many; older records are ignored.
	History []Record
}

// Policy turns a page's history into its next revisit interval.
//
// Implementations must be pure and deterministic (the same Page always gives the same result), safe
// for concurrent use, and must neither modify nor retain p.History. NextFrMax always returns at least
// 1; with no usable record it returns p.FrMax (brought within the policy's bounds, if any).
type Policy interface {
	// Name is the name the policy is registered under, such as "bouras".
	Name() string
	// NextFrMax returns the page's new fr_max.
	NextFrMax(p Page) int
}

// Options are the settings common to the policies [New] builds. A zero field means the policy's
// default.
type Options struct {
	Limit int // how many of the last successful records a policy examines (Bouras: 10)
	Min   int // the smallest fr_max a policy may return (Bouras: 1)
	Max   int // the largest fr_max a policy may return (Bouras: 30)
}

// An Option sets one of the [Options] given to [New].
type Option func(*Options)

// WithLimit sets how many of the last successful records a policy examines.
func WithLimit(n int) Option { return func(o *Options) { o.Limit = n } }

// WithBounds sets the smallest and largest fr_max a policy may return.
func WithBounds(minFrMax, maxFrMax int) Option {
	return func(o *Options) { o.Min, o.Max = minFrMax, maxFrMax }
}

// Factory builds a policy from its options, or reports why they are invalid.
type Factory func(Options) (Policy, error)

// DefaultPolicy is the policy [New] builds for an empty name.
const DefaultPolicy = "bouras"

// ErrUnknownPolicy is wrapped by the error [New] returns for a name nobody registered.
var ErrUnknownPolicy = errors.New("unknown policy")

var registry = struct {
	sync.RWMutex
	m map[string]Factory
}{m: map[string]Factory{
	"bouras": func(o Options) (Policy, error) {
		b := Bouras{Limit: o.Limit, Min: o.Min, Max: o.Max}
		if err := b.Validate(); err != nil {
			return nil, err
		}
		return b, nil
	},
}}

// Register makes a policy available to [New] under name (matched case-insensitively). It is meant to
// be called from init functions; it panics if name is empty, f is nil or name is already taken.
func Register(name string, f Factory) {
	key := strings.ToLower(strings.TrimSpace(name))
	if key == "" || f == nil {
		panic("frequency: Register with an empty name or a nil factory")
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[key]; dup {
		panic("frequency: Register called twice for policy " + key)
	}
	registry.m[key] = f
}

// Names returns the names of the registered policies, sorted.
func Names() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New builds the policy registered under name (case-insensitive; "" means [DefaultPolicy]) with
// opts applied. An unknown name is an error wrapping [ErrUnknownPolicy] that lists the known ones;
// invalid options are an error from the policy's factory.
func New(name string, opts ...Option) (Policy, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if key == "" {
		key = DefaultPolicy
	}
	registry.RLock()
	f := registry.m[key]
	registry.RUnlock()
	if f == nil {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownPolicy, name, strings.Join(Names(), ", "))
	}
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	return f(o)
}

// Uniform revisits every page at every run: fr_max is always Min (1 by default). Without a budget it
// crawls everything each run; under a budget the run takes the pages that have waited longest, so
// every page is visited once every pages/budget runs, round robin — the uniform revisiting that Cho
// and Garcia-Molina found hard to beat, and the baseline the other policies are measured against.
type Uniform struct {
	Min int // the interval returned; 0 means 1
}

// Name returns "uniform".
func (Uniform) Name() string { return "uniform" }

// NextFrMax returns Min, or 1.
func (u Uniform) NextFrMax(Page) int { return max(u.Min, 1) }

func init() {
	Register("uniform", func(o Options) (Policy, error) {
		if o.Min < 0 {
			return nil, fmt.Errorf("min fr_max %d: must be at least 1 (0 means 1)", o.Min)
		}
		return Uniform{Min: o.Min}, nil
	})
}
