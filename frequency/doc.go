// Package frequency decides how often strata revisits each page: after every crawl of a page it turns
// the page's fetch history into a new revisit interval, and for hub pages it decides whether the
// subtree below an unchanged hub is worth visiting. It is the "Frequency Manager" of Bouras,
// Poulopoulos and Thanou, Creating a polite, adaptive and selective incremental crawler (sections 3.2
// and 3.3), with the errata listed in the papers README.
//
// # fr and fr_max
//
// Every URL row carries two counters. fr_max is the revisit interval in runs (1 = every run, 2 = every
// other run, …). fr is the number of runs still to wait: each run first decrements every fr > 0, the
// pages whose fr is then 0 are due and crawled, and a crawled page gets fr = fr_max again. This
// package never touches fr; it only computes the next fr_max, from the page's records (one Record per
// fetch, oldest first) through a [Policy].
//
// # Policies
//
// [Bouras] is the paper's rule: over the last x = min(records, Limit) successful records, with counter
// changes among them, b = x (no change) or x / counter, and new fr_max = floor((fr_max + b) / 2),
// kept within [Min, Max]. A page that changes at every crawl converges to fr_max = 1; a page that
// never changes climbs to the fixed point of the rule (Limit−1 or Limit, or Max if that is lower).
// [Nutch] is Apache Nutch's AdaptiveFetchSchedule, the baseline most open-source crawls run. The
// budgeted optimiser ([MakePlan], with rates from [Estimator] or, better on short histories, a
// [RateMix] fitted to the population) and Ghodsi et al.'s sampling policy ([Hybrid]) are the other
// policies; [New] builds the per-page ones by name, for the configuration key frequency.policy.
//
// # Selective incremental crawling
//
// A due hub page whose content has not changed is still worth analysing when many of the pages it
// links to have changed. [ChildChangeRatio] measures the share of a hub's known children that changed,
// [Selective.Decide] compares it with the hub's own threshold (0.40 at first), and
// [Selective.NextThreshold] moves that threshold each time the hub comes due. [HubAdjust] shortens the
// interval of a hub whose children change much more often than the hub itself (the paper's "6 → 3").
//
// Everything here is pure: no I/O, no clocks, no shared state except the policy registry, and no
// randomness but the caller's own generator handed to a [Sampler]; every function and method is
// safe for concurrent use except where its comment says otherwise ([Sampler], [RateMix.Fit]).
package frequency
