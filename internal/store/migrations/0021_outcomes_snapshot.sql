-- One definition of each outcome (issue 21, package internal/outcome). runs.unchanged counted a
-- page's first version as unchanged, so the first run of a fresh crawl showed its new pages there
-- while its summary called them new. runs.new counts the fetches that stored a page's first
-- version, and every run's counts are rebuilt from its fetches with the shared definition:
--   new          stored a version, and no earlier fetch of the page stored one
--   changed      stored a version whose words differ from the previous one (fetches.changed)
--   unchanged    stored a version with the same words (new bytes), or a usable 200 that stored none
--   not_modified a 304
--   errors       no response (status 0), a 5xx, or a 200 with an error that stored nothing
--   not_found    a 404 or 410
--   fetched      every fetch that got a response
-- (internal/outcome.Of is the definition; this is it in SQL, once, for the runs before it.)
ALTER TABLE runs ADD COLUMN new INTEGER NOT NULL DEFAULT 0;

WITH facts AS (
    SELECT f.run_id AS run, f.status AS status, f.changed AS changed, f.not_modified AS not_modified,
        f.error IS NOT NULL AS failed, f.archive_path IS NOT NULL AS stored,
        (f.archive_path IS NOT NULL AND NOT EXISTS (SELECT 1 FROM fetches g
            WHERE g.url_id = f.url_id AND g.id < f.id AND g.archive_path IS NOT NULL)) AS first
    FROM fetches f WHERE f.run_id IS NOT NULL
), counts AS (
    SELECT run,
        sum(status > 0) AS fetched,
        sum(stored AND first) AS new,
        sum(stored AND NOT first AND changed) AS changed,
        sum(stored AND NOT first AND NOT changed
            OR NOT stored AND NOT not_modified AND status = 200 AND NOT failed) AS unchanged,
        sum(NOT stored AND not_modified) AS not_modified,
        sum(NOT stored AND NOT not_modified AND status NOT IN (404, 410) AND NOT (status >= 300 AND status < 400)
            AND (status = 0 OR status >= 500 OR failed AND status = 200)) AS errors,
        sum(NOT stored AND NOT not_modified AND status IN (404, 410)) AS not_found
    FROM facts GROUP BY run
)
UPDATE runs SET fetched = counts.fetched, new = counts.new, changed = counts.changed,
    unchanged = counts.unchanged, not_modified = counts.not_modified, errors = counts.errors,
    not_found = counts.not_found
FROM counts WHERE counts.run = runs.id;

-- Snapshot seeds (issue 21): a seed with snapshot = 1 has every active page of its tree (root_id =
-- the seed) fetched in every run, whatever its fr and the selective rule say: each countdown makes
-- them due, as it does pages that answered 404, unless their host is being backed off as
-- unreachable (politeness.unreachable > 0). Set with strata seed add --snapshot; 0 on every other
-- row. The seeds are few and urls_seed finds them, so a countdown without snapshot seeds costs
-- nothing more.
ALTER TABLE urls ADD COLUMN snapshot INTEGER NOT NULL DEFAULT 0 CHECK (snapshot IN (0, 1));
