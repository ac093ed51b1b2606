package filter

// Defaults of the default filter.
const (
	DefaultMaxLength     = 2048 // bytes of the normalised URL
	DefaultMaxRepeat     = 3    // occurrences of one path segment
	DefaultMaxRepeatPair = 2    // occurrences of one pair of adjacent path segments
)

// defaultFilter is built once: filters are immutable, so every caller can share it.
var defaultFilter = Named("default", All(
	must(Scheme("http", "https")),
	SeedDomains(),
	DenyExtensions(defaultExtensions...),
	must(Query(QueryRules{Strip: defaultTrackingParams})),
	MaxLength(DefaultMaxLength),
	MaxRepeat(DefaultMaxRepeat, DefaultMaxRepeatPair),
))

// Default returns the filter strata uses when the user configures none; in TOML it is
// default = true, which other filters can then narrow. It is All of, in this order:
//
//	all[0] scheme http or https
//	all[1] seed_domains: the URL's registrable domain is one of the seeds' (seeds themselves pass)
//	all[2] deny_extensions: not an image, audio, video, archive, office document, font, style
//	       sheet, script or executable (DefaultExtensions)
//	all[3] query: strip the tracking and session parameters (DefaultTrackingParams)
//	all[4] max_length: at most DefaultMaxLength bytes once stripped
//	all[5] max_repeat: no path segment more than DefaultMaxRepeat times, and no pair of adjacent
//	       segments more than DefaultMaxRepeatPair times ("/a/b/a/b/a/b" is rejected)
//
// and its reasons start with "[default] ".
func Default() Filter { return defaultFilter }

func must(f Filter, err error) Filter {
	if err != nil {
		panic(err)
	}
	return f
}
