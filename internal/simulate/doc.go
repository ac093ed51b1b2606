// Package simulate compares strata's revisit policies side by side on a synthetic web in memory: N
// pages on H sites with known change processes (static, Poisson with heavy-tailed rates, Pareto
// inter-update times, quasi-deterministic weekdays and days, Bouras's two hub archetypes, pages that
// appear and disappear), crawled day by day for D days by every policy through the same frequency
// code `strata run` uses, and measured for fetches per day, freshness, age of stale copies,
// efficiency, changes missed and the delay before a new page is first fetched. It touches neither
// disk nor network.
package simulate
