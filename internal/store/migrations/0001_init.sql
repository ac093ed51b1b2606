-- Schema version 1. Times are UTC text, "2026-11-22T03:15:00.000Z", so they sort and read well in sqlite3.

-- One row per URL strata knows: the paper's URL table.
CREATE TABLE urls (
    id            INTEGER PRIMARY KEY,
    url           TEXT    NOT NULL UNIQUE,              -- normalised (internal/urlnorm)
    host          TEXT    NOT NULL,                     -- host[:port] as in the URL
    level         INTEGER NOT NULL DEFAULT 0 CHECK (level >= 0),   -- link levels still to follow below this page
    fr            INTEGER NOT NULL DEFAULT 0 CHECK (fr >= 0),      -- runs to wait before the next crawl; 0 = due
    fr_max        INTEGER NOT NULL DEFAULT 1 CHECK (fr_max >= 1),  -- revisit interval in runs
    size          INTEGER,                              -- bytes of the last fetched body
    content_type  TEXT,
    date          TEXT,                                 -- last crawled
    etag          TEXT,
    last_modified TEXT,
    content_hash  TEXT,                                 -- of the last stored version
    last_status   INTEGER,                              -- HTTP status of the last fetch; 0 = no response
    state         TEXT    NOT NULL DEFAULT 'active'
                  CHECK (state IN ('active', 'gone', 'blocked', 'filtered', 'removed')),
    threshold     REAL    NOT NULL DEFAULT 0.40 CHECK (threshold >= 0 AND threshold <= 1), -- child-change threshold
    rate_bucket   INTEGER NOT NULL DEFAULT 0 CHECK (rate_bucket BETWEEN 0 AND 255),     -- change-rate bucket
    is_seed       INTEGER NOT NULL DEFAULT 0 CHECK (is_seed IN (0, 1)),
    root_id       INTEGER REFERENCES urls (id) ON DELETE SET NULL,  -- the seed whose tree this page belongs to
    parent_id     INTEGER REFERENCES urls (id) ON DELETE SET NULL,  -- the page on which it was first found
    added_at      TEXT    NOT NULL
);
CREATE INDEX urls_due ON urls (state, fr, level);
CREATE INDEX urls_host_due ON urls (host, state, fr, level);
CREATE INDEX urls_root ON urls (root_id);
CREATE INDEX urls_parent ON urls (parent_id);
CREATE INDEX urls_seed ON urls (is_seed) WHERE is_seed = 1;

-- One row per run of the cycle.
CREATE TABLE runs (
    id                INTEGER PRIMARY KEY,
    started_at        TEXT    NOT NULL,
    ended_at          TEXT,
    start_offset_ms   INTEGER NOT NULL DEFAULT 0,       -- rotating start offset waited before the run
    status            TEXT    NOT NULL DEFAULT 'running'
                      CHECK (status IN ('running', 'completed', 'interrupted', 'failed')),
    fetched           INTEGER NOT NULL DEFAULT 0,
    changed           INTEGER NOT NULL DEFAULT 0,
    unchanged         INTEGER NOT NULL DEFAULT 0,
    not_modified      INTEGER NOT NULL DEFAULT 0,
    errors            INTEGER NOT NULL DEFAULT 0,
    blocked           INTEGER NOT NULL DEFAULT 0,       -- refused by robots.txt
    skipped_fr        INTEGER NOT NULL DEFAULT 0,
    skipped_selective INTEGER NOT NULL DEFAULT 0,
    new_urls          INTEGER NOT NULL DEFAULT 0,
    bytes             INTEGER NOT NULL DEFAULT 0,
    crawl_ms          INTEGER NOT NULL DEFAULT 0,
    recalc_ms         INTEGER NOT NULL DEFAULT 0,
    links_ms          INTEGER NOT NULL DEFAULT 0
);

-- One row per crawl of a URL: the paper's "records of a page".
CREATE TABLE fetches (
    id           INTEGER PRIMARY KEY,
    url_id       INTEGER NOT NULL REFERENCES urls (id) ON DELETE CASCADE,
    run_id       INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    fetched_at   TEXT    NOT NULL,
    status       INTEGER NOT NULL DEFAULT 0,            -- HTTP status; 0 = no response
    size         INTEGER,
    content_hash TEXT,
    changed      INTEGER NOT NULL DEFAULT 0 CHECK (changed IN (0, 1)),
    not_modified INTEGER NOT NULL DEFAULT 0 CHECK (not_modified IN (0, 1)),
    archive_path TEXT,                                  -- page directory relative to archive.root
    error        TEXT,
    duration_ms  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX fetches_url ON fetches (url_id, id);
CREATE INDEX fetches_run ON fetches (run_id);

-- The link graph: every link seen on a fetched page.
CREATE TABLE links (
    from_id   INTEGER NOT NULL REFERENCES urls (id) ON DELETE CASCADE,
    to_url    TEXT    NOT NULL,
    to_id     INTEGER REFERENCES urls (id) ON DELETE SET NULL,
    internal  INTEGER NOT NULL CHECK (internal IN (0, 1)),
    first_run INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    last_run  INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    PRIMARY KEY (from_id, to_url)
) WITHOUT ROWID;
CREATE INDEX links_to ON links (to_id);

-- Per origin (scheme://host[:port]): robots.txt cache and politeness state.
CREATE TABLE hosts (
    origin            TEXT PRIMARY KEY,
    domain            TEXT    NOT NULL,                 -- politeness key (registrable domain or host)
    robots_status     INTEGER,
    robots_body       BLOB,
    robots_fetched_at TEXT,
    robots_expires_at TEXT,
    crawl_delay_ms    INTEGER,
    last_access_at    TEXT
) WITHOUT ROWID;
CREATE INDEX hosts_domain ON hosts (domain);
