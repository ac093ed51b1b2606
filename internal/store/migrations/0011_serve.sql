-- Schema version 11: strata serve's changes page. It lists the pages that changed in a run, the
-- biggest change first, filtered by a least magnitude. Changed fetches are a small share of all
-- fetches, so a partial index over them alone, in the order the page reads them (magnitude, NULL
-- as -1, then fetch id for a stable keyset), costs the crawl little and spares serve from reading
-- every fetch of a run to find them.
CREATE INDEX fetches_changes ON fetches (run_id, ifnull(magnitude, -1) DESC, id) WHERE changed = 1;
