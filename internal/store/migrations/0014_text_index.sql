-- Schema version 14: what strata serve reads beyond the crawl's own records, filled by the index
-- step that follows each run (and by strata index for databases crawled before it): the full text
-- of every stored version for search, each page's title, and each finished run's new, gone and
-- unlinked pages. The crawl never writes these tables, so it does not get slower per page; a crash
-- between two batches of the step leaves the state below it consistent, and the next step goes on
-- from there.

-- The text of every stored version; rowid is the fetch id of the version (fetches.id). Letters are
-- folded to lower case without diacritics, so "cafe" finds "Café".
CREATE VIRTUAL TABLE version_text USING fts5(title, text, url_id UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2');

-- The title of each page's newest indexed version.
CREATE TABLE page_titles (
    url_id   INTEGER PRIMARY KEY,
    fetch_id INTEGER NOT NULL,
    title    TEXT NOT NULL
);

-- How far the step has gone: versions with fetch ids up to fetch_upto are in version_text, and the
-- finished runs up to run_upto have their rows in run_pages and page_events.
CREATE TABLE text_index (
    one        INTEGER PRIMARY KEY CHECK (one = 1),
    fetch_upto INTEGER NOT NULL,
    run_upto   INTEGER NOT NULL
);
INSERT INTO text_index (one, fetch_upto, run_upto) VALUES (1, 0, 0);

-- What happened to pages in a run, beyond changes: 'new' (the page's first stored version),
-- 'gone' (a 404 or 410 after a usable answer), 'unlinked' (the pages that linked to it were read
-- again in the run and none links to it any more).
CREATE TABLE page_events (
    run_id   INTEGER NOT NULL,
    kind     TEXT NOT NULL CHECK (kind IN ('new', 'gone', 'unlinked')),
    url_id   INTEGER NOT NULL,
    fetch_id INTEGER, -- the fetch that showed it; NULL for 'unlinked'
    PRIMARY KEY (run_id, kind, url_id)
) WITHOUT ROWID;
CREATE INDEX page_events_url ON page_events (url_id, run_id);

-- Per run, and per run and politeness domain: the counts of page_events and the 404 or 410 answers.
CREATE TABLE run_pages (
    run_id    INTEGER PRIMARY KEY,
    new       INTEGER NOT NULL,
    gone      INTEGER NOT NULL,
    unlinked  INTEGER NOT NULL,
    not_found INTEGER NOT NULL
);
CREATE TABLE run_domain_pages (
    run_id    INTEGER NOT NULL,
    domain    TEXT NOT NULL,
    new       INTEGER NOT NULL,
    gone      INTEGER NOT NULL,
    not_found INTEGER NOT NULL,
    PRIMARY KEY (run_id, domain)
) WITHOUT ROWID;
