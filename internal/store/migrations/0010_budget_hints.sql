-- Schema version 10: budgets, priorities, provider hints and the model's accountability.

-- prio orders a host's due URLs (highest first) when a run has less budget or time than due pages:
-- Xu et al.'s cost of staleness, set at the start of such a run; 0 otherwise, which leaves the
-- order to level and id. weight is the page's importance for the weighted objective and the
-- priority (1 = ordinary): from its seed's priority and its in-links.
ALTER TABLE urls ADD COLUMN prio REAL NOT NULL DEFAULT 0;
ALTER TABLE urls ADD COLUMN weight REAL NOT NULL DEFAULT 1 CHECK (weight > 0);
DROP INDEX urls_due_now;
CREATE INDEX urls_due_now ON urls (host, prio DESC, level DESC, id) WHERE state = 'active' AND fr = 0;

-- Provider hints, on the site's own clock: site_date is the Date header of the page's last fetch;
-- hint_lastmod the newest lastmod (sitemap) or item date (feed) seen for it, hint_source where from.
-- release_days is a bit mask of weekdays (bit 0 = Sunday) on which the page's changes cluster, for
-- quasi-deterministic pages; 0 when they do not.
ALTER TABLE urls ADD COLUMN site_date TEXT;
ALTER TABLE urls ADD COLUMN hint_lastmod TEXT;
ALTER TABLE urls ADD COLUMN hint_source TEXT;
ALTER TABLE urls ADD COLUMN release_days INTEGER NOT NULL DEFAULT 0;

-- Per origin: when its sitemaps and feeds were last read, the feeds its pages link (a JSON array),
-- and how often its hints agreed with what strata then observed (Xu et al.'s honest provider).
ALTER TABLE hosts ADD COLUMN hints_read_at TEXT;
ALTER TABLE hosts ADD COLUMN feeds TEXT;
ALTER TABLE hosts ADD COLUMN hints_agreed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hosts ADD COLUMN hints_disagreed INTEGER NOT NULL DEFAULT 0;
-- Of the changes strata saw on hinted pages: those the hints announced, and those they missed.
ALTER TABLE hosts ADD COLUMN hints_announced INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hosts ADD COLUMN hints_missed INTEGER NOT NULL DEFAULT 0;

-- A seed's priority, set by the user, for the weighted objective (1 = ordinary); pages use their seed's.
ALTER TABLE urls ADD COLUMN priority REAL NOT NULL DEFAULT 1 CHECK (priority > 0);

-- Accountability: how many changes the rate estimates predicted among the pages fetched with an
-- estimate, and how many were observed among them; fetches of never-crawled and known pages.
ALTER TABLE runs ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN expected_changes REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN observed_changes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN new_fetched INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN known_fetched INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN budget INTEGER NOT NULL DEFAULT 0;

-- The fetch budget each politeness domain used in a run.
CREATE TABLE run_domains (
    run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    domain   TEXT    NOT NULL,
    fetched  INTEGER NOT NULL DEFAULT 0,
    changed  INTEGER NOT NULL DEFAULT 0,
    expected REAL    NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, domain)
) WITHOUT ROWID;

-- Small fitted models kept from run to run, by name (the change-rate prior of the optimal policy).
CREATE TABLE models (
    name       TEXT PRIMARY KEY,
    body       TEXT NOT NULL,
    updated_at TEXT NOT NULL
) WITHOUT ROWID;
