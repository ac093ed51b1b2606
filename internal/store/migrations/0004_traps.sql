-- Schema version 4: trap defences. One row each time a domain trips a cap, a URL pattern looks like
-- a calendar or an ever-growing counter, or a URL prefix keeps producing duplicate pages; strata
-- traps reads them.
CREATE TABLE trap_events (
    id      INTEGER PRIMARY KEY,
    run_id  INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    at      TEXT    NOT NULL,
    domain  TEXT    NOT NULL,
    kind    TEXT    NOT NULL CHECK (kind IN ('max_new_per_domain', 'max_urls_per_domain', 'pattern', 'duplicates')),
    pattern TEXT    NOT NULL DEFAULT '', -- the URL shape or prefix concerned
    detail  TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX trap_events_domain ON trap_events (domain, run_id);
