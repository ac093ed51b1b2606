-- Schema version 15: trap defences that weigh evidence across runs, and hold URLs instead of
-- refusing them.
--
-- trap_rules keeps, per domain and unit of URLs (a directory, or a URL shape with its numbers,
-- opaque tokens and path loops set aside; package traps), what the crawl has seen: pages fetched,
-- how many repeated an earlier page's text, URLs found on the unit's own pages and the levels they
-- span. A unit the evidence condemns is 'throttled': its URLs are held in trap_holds, and each run's
-- countdown releases a probe (probes URLs) when probe_every runs have passed since the last one.
-- Deleting a rule releases every URL it holds.
CREATE TABLE trap_rules (
    id          INTEGER PRIMARY KEY,
    domain      TEXT    NOT NULL,
    unit        TEXT    NOT NULL,
    state       TEXT    NOT NULL DEFAULT 'watch' CHECK (state IN ('watch', 'throttled')),
    reason      TEXT    NOT NULL DEFAULT '' CHECK (reason IN ('', 'duplicates', 'pattern')),
    judged      INTEGER NOT NULL DEFAULT 0, -- pages fetched for the first time, with text
    dups        INTEGER NOT NULL DEFAULT 0, -- of them, an earlier page's text (numbers and dates aside)
    found       INTEGER NOT NULL DEFAULT 0, -- URLs that joined the table
    self_found  INTEGER NOT NULL DEFAULT 0, -- of them, found on a page of the unit
    min_level   INTEGER NOT NULL DEFAULT 0,
    max_level   INTEGER NOT NULL DEFAULT 0,
    norms       BLOB,                       -- the last distinct texts' hashes, 8 bytes each, little-endian
    streak      INTEGER NOT NULL DEFAULT 0, -- probes in a row that brought new text
    probes      INTEGER NOT NULL DEFAULT 1 CHECK (probes >= 1),      -- URLs a probe releases
    probe_every INTEGER NOT NULL DEFAULT 1 CHECK (probe_every >= 1), -- runs between two probes
    probed_tick INTEGER NOT NULL DEFAULT 0, -- countdown tick of the last probe
    first_run   INTEGER NOT NULL DEFAULT 0,
    last_run    INTEGER NOT NULL DEFAULT 0, -- run of the last evidence
    since_run   INTEGER NOT NULL DEFAULT 0, -- run it was throttled in
    UNIQUE (domain, unit)
);

-- A URL a throttled rule holds: in the table, never due, until a probe releases it (released = the
-- countdown tick) or the rule ends. A released probe's row goes at the next countdown once the URL
-- was fetched.
CREATE TABLE trap_holds (
    url_id   INTEGER PRIMARY KEY REFERENCES urls (id) ON DELETE CASCADE,
    rule_id  INTEGER NOT NULL REFERENCES trap_rules (id) ON DELETE CASCADE,
    released INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX trap_holds_rule ON trap_holds (rule_id, released);
CREATE INDEX trap_holds_out ON trap_holds (url_id) WHERE released > 0; -- the probes out, for each countdown

-- The due table (0013) now leaves out held URLs: a URL is due when it is active, its tick has
-- come and no rule holds it. The triggers below keep that true whichever way a URL's row or its
-- hold changes, so that nothing else — the selective rule's ForceChildren, recalc, the optimal
-- plan's phases, hints — can make a held URL due by moving its tick.
DROP TRIGGER urls_due_insert;
CREATE TRIGGER urls_due_insert AFTER INSERT ON urls
WHEN new.state = 'active' AND new.due_tick <= (SELECT tick FROM countdown)
BEGIN
    INSERT INTO due (host, prio, level, id) SELECT new.host, new.prio, new.level, new.id
    WHERE NOT EXISTS (SELECT 1 FROM trap_holds WHERE url_id = new.id AND released = 0);
END;

DROP TRIGGER urls_due_update;
CREATE TRIGGER urls_due_update AFTER UPDATE OF host, prio, level, state, due_tick ON urls
WHEN (old.state = 'active' AND old.due_tick <= (SELECT tick FROM countdown))
    OR (new.state = 'active' AND new.due_tick <= (SELECT tick FROM countdown))
BEGIN
    DELETE FROM due WHERE host = old.host AND prio = old.prio AND level = old.level AND id = old.id;
    INSERT INTO due (host, prio, level, id) SELECT new.host, new.prio, new.level, new.id
    WHERE new.state = 'active' AND new.due_tick <= (SELECT tick FROM countdown)
    AND NOT EXISTS (SELECT 1 FROM trap_holds WHERE url_id = new.id AND released = 0);
END;

CREATE TRIGGER trap_holds_insert AFTER INSERT ON trap_holds WHEN new.released = 0
BEGIN
    DELETE FROM due WHERE (host, prio, level, id) IN (SELECT host, prio, level, id FROM urls WHERE id = new.url_id);
END;

CREATE TRIGGER trap_holds_release AFTER UPDATE OF released ON trap_holds WHEN old.released = 0 AND new.released <> 0
BEGIN
    INSERT OR IGNORE INTO due (host, prio, level, id) SELECT host, prio, level, id FROM urls
    WHERE id = new.url_id AND state = 'active' AND due_tick <= (SELECT tick FROM countdown);
END;

CREATE TRIGGER trap_holds_delete AFTER DELETE ON trap_holds WHEN old.released = 0
BEGIN
    INSERT OR IGNORE INTO due (host, prio, level, id) SELECT host, prio, level, id FROM urls
    WHERE id = old.url_id AND state = 'active' AND due_tick <= (SELECT tick FROM countdown);
END;

-- Rules fired before are events of kinds 'pattern' and 'duplicates' still; a rule whose probes
-- brought new text ends with a 'cleared' event. SQLite cannot change a CHECK in place.
CREATE TABLE trap_events_new (
    id      INTEGER PRIMARY KEY,
    run_id  INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    at      TEXT    NOT NULL,
    domain  TEXT    NOT NULL,
    kind    TEXT    NOT NULL CHECK (kind IN ('max_new_per_domain', 'max_urls_per_domain', 'pattern', 'duplicates', 'cleared')),
    pattern TEXT    NOT NULL DEFAULT '',
    detail  TEXT    NOT NULL DEFAULT ''
);
INSERT INTO trap_events_new (id, run_id, at, domain, kind, pattern, detail)
    SELECT id, run_id, at, domain, kind, pattern, detail FROM trap_events;
DROP TABLE trap_events;
ALTER TABLE trap_events_new RENAME TO trap_events;
CREATE INDEX trap_events_domain ON trap_events (domain, run_id);
