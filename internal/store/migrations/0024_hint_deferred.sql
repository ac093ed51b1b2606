-- Schema version 24: a page a trusted origin's hints put off (store.DeferByHint) says so
-- (issue 17). The optimal policy's plan puts every page whose countdown is longer than its new
-- interval back on its phase (ApplyPlan), and so undid each run the deferrals of that run's crawl:
-- strata simulate's honest sitemaps got about ten more fetches from optimal than from bouras in 15
-- days. A fetch, a hint that the page changed, or the origin's losing its trust (ResumeDeferred)
-- clears the mark.
ALTER TABLE urls ADD COLUMN hint_deferred INTEGER NOT NULL DEFAULT 0;
-- Pages deferred before this version carry the mark ResumeDeferred looked for: a countdown of more
-- than twice their interval, which only a deferral makes, on a page with a hint.
UPDATE urls SET hint_deferred = 1
	WHERE hint_lastmod IS NOT NULL AND state = 'active'
	AND due_tick > (SELECT tick FROM countdown) + 2 * max(fr_max, 1);
