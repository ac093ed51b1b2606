// Package simulate compares strata's revisit policies side by side on a synthetic web: N pages on H
// sites with known change processes (static, Poisson with heavy-tailed rates, Pareto inter-update
// times, quasi-deterministic weekdays and days, Bouras's two hub archetypes, pages that appear and
// disappear), each site on a loopback host of its own, its hub linking its pages.
//
// Every policy but the oracle is strata itself: the run cycle strata run uses (crawler.Open), with a
// database and an archive of its own, crawling the web once per simulated day on a clock that says
// that day, while the web answers in memory through the same politeness gate and fetch client a real
// crawl uses. Nothing here decides what to fetch; the policies are measured only by the requests
// they sent — fetches per day, freshness, age of stale copies, efficiency, changes missed and the
// delay before a new page is first fetched — against the web's true history.
package simulate
