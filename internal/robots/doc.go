// Package robots decides which URLs of a host strata may fetch, by fetching, parsing and applying
// that host's robots.txt as RFC 9309 (the Robots Exclusion Protocol) specifies.
//
// # What it does
//
// Fetch gets scheme://host/robots.txt (RFC 9309 §2.3): a 2xx body is parsed, a 4xx means there
// is no policy, so everything is allowed, and a 5xx, a network error or more than five redirects
// means the host is unreachable, so everything is disallowed for this run and the caller retries
// next run. Parse turns a body into Rules; Rules.Allowed answers for one product token and one
// path, Rules.CrawlDelay and Rules.Sitemaps expose the two common extensions.
//
// The rules, in short:
//
//   - Only the first MaxSize (500 KiB, the minimum RFC 9309 §2.5 asks crawlers to read) bytes are
//     parsed. If the body reaches that size, its last, possibly cut-off line is dropped too: a
//     cut "Allow: /a-long-path" would become "Allow: /a" and allow more than the site meant.
//   - A line is "name: value # comment". '#' starts a comment anywhere on a line. Names are
//     case-insensitive; a few common typos ("useragent", "disalow", "crawldelay", ...) are
//     accepted, as is a missing colon after a known name ("disallow /"). Lines may end in LF,
//     CRLF or CR; a UTF-8 byte order mark (even a truncated one) at the start is skipped. Any line
//     that cannot be understood is skipped on its own; nothing makes the whole file fail.
//   - Grouping (§2.2): one or more User-agent lines start a group, and the group runs until a
//     User-agent line that follows an Allow or Disallow line. Blank lines, comments, Crawl-delay,
//     Sitemap and unknown lines neither start nor end a group. Rules before the first User-agent
//     line belong to no group and are ignored.
//   - Agent matching (§2.2.1): the product token of a User-agent value (its leading run of
//     letters, digits, '-' and '_', so "Foo-Bot/2.1" names "foo-bot") is compared with the
//     caller's product token case-insensitively and exactly. All groups naming the agent are
//     merged. Only if no group names it does the "*" group apply; if there is none, everything
//     is allowed.
//   - Rule matching (§2.2.2, §2.2.3): a rule matches from the first octet of the path; '*' matches
//     any sequence of octets and a '$' at the end of the rule anchors the end of the path. Of all
//     matching rules of the agent's groups, the longest (in octets) wins, and on a tie Allow wins.
//     An empty Disallow matches nothing. "/robots.txt" is always allowed.
//   - Before comparing, rule and path are normalised the same way (§2.2.2): escapes of unreserved
//     characters are decoded ("%7E" is "~"), all other escapes get upper-case hex, and non-ASCII
//     and other octets that may not appear raw in a URI are percent-encoded, so "/ツ" in a rule
//     matches "/%E3%83%84" in a URL. In the path, a literal '*' or '$' is encoded, so that a rule
//     can match it with "%2A" or "%24" as §2.2.3 describes; in the query, ':', '/', '?' and '@'
//     are encoded, as in the §2.2.2 table ("?baz=https://foo.bar" is matched as
//     "?baz=https%3A%2F%2Ffoo.bar").
//   - Matching never uses regular expressions: a rule is split at its '*'s and each literal piece
//     is found at its leftmost place after the previous one, which is correct for these patterns
//     and costs about O(len(path)+len(rule)) per rule, so a hostile file cannot make Allowed slow.
//   - Crawl-delay takes a non-negative decimal number of seconds ("10", "2.5"); anything else is
//     ignored. It belongs to the group it appears in; if the agent's merged groups give several,
//     the largest applies, which is the polite reading.
//
// # Our code and github.com/temoto/robotstxt
//
// Everything in this package's non-test files is our own code: the fetcher, the line parser, the
// grouping, the normaliser and the matcher. github.com/temoto/robotstxt (v1.1.2) is imported only
// by the tests, for two jobs. First, as an independent oracle: a differential test generates
// simple files, in which temoto follows RFC 9309 (plain paths without wildcards, no equal-length
// ties, exact and distinct agent names, no empty groups), and checks that both packages agree.
// Second, the deviation tests pin down where temoto departs from RFC 9309, which is why it cannot
// be used for the real work:
//
//  1. one stray line (a rule before the first User-agent, a non-numeric Crawl-delay) makes the
//     whole file fail to parse, losing every rule in it;
//  2. after a 5xx, the group returned by FindGroup allows everything;
//  3. agents match by prefix (a "Foo" group applies to "FooBot"), and a group without rules
//     falls back to "*";
//  4. a Crawl-delay line between User-agent lines splits them into separate groups;
//  5. on equal-length Allow and Disallow matches, the first line wins instead of Allow;
//  6. wildcard rules are ranked by the length of the regular expression they compile to, and are
//     not anchored at the start of the path;
//  7. "Disallow: *" is ignored;
//  8. there is no percent-encoding normalisation;
//  9. '#' inside a value does not start a comment;
//  10. there is no size limit, and wildcard rules become regular expressions: a 20 MiB file of
//     wildcard rules takes seconds and gigabytes to parse.
//
// Wrapping temoto could not fix 1, 3, 4, 7, 9 and 10, which happen inside its parser, so the
// parser and matcher had to be ours; keeping temoto as a test oracle costs nothing at run time.
//
// Two decisions go beyond the letter of RFC 9309 in the polite direction: a 429 (Too Many
// Requests) is treated like a 5xx rather than like other 4xx, because the server is asking us to
// slow down, not telling us there is no robots.txt; and more than five redirects count as
// unreachable (disallow all) rather than unavailable (allow all), which RFC 9309 §2.3.1.2 would
// also permit.
package robots
