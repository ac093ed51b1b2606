-- Schema version 13: fr is stored as the tick it counts down to, and the due URLs have a table of
-- their own. Before, the countdown at the start of each run rewrote every waiting row
-- (fr = fr - 1): 8.6 s over 1 M URLs, whatever the run then crawled. Now it advances one counter,
-- countdown.tick, and adds the URLs whose tick has come to the narrow table due: it writes neither
-- the wide url rows nor anything for the pages still waiting.
--
-- urls.due_tick is the tick at whose countdown the page comes due (0: due now). The paper's fr is
-- max(due_tick - countdown.tick, 0); the view url_fr shows it. A URL is due when it is active and its
-- due_tick <= countdown.tick, and then, and only then, it has a row in due, keyed in the order the
-- crawl takes a host's due URLs. The countdown adds the rows whose tick came; the triggers below keep
-- due right for every other change to urls, from strata or from a user's SQL.
CREATE TABLE countdown (
    one    INTEGER PRIMARY KEY CHECK (one = 1),
    tick   INTEGER NOT NULL CHECK (tick >= 1), -- countdowns so far, plus one
    filled INTEGER NOT NULL                    -- due holds the URLs whose tick is at most this
);
INSERT INTO countdown (one, tick, filled) VALUES (1, 1, 1);

DROP INDEX urls_due_now;
ALTER TABLE urls RENAME COLUMN fr TO due_tick;
UPDATE urls SET due_tick = 1 + due_tick WHERE due_tick > 0;
-- The waiting URLs in the order they come due, with what due needs, so the countdown reads no row.
-- id second: a page's entry moves whenever its due_tick does (every crawl, every changed interval),
-- and in id order the moves of a batch written in id order land in neighbouring pages. With host
-- second they landed all over the index, and recalc over 1 M pages took 64 s instead of 10.
CREATE INDEX urls_waiting ON urls (due_tick, id, host, prio, level) WHERE state = 'active' AND due_tick > 0;

CREATE TABLE due (
    host  TEXT NOT NULL,
    prio  REAL NOT NULL,
    level INTEGER NOT NULL,
    id    INTEGER NOT NULL,
    PRIMARY KEY (host, prio DESC, level DESC, id)
) WITHOUT ROWID;
INSERT INTO due (host, prio, level, id) SELECT host, prio, level, id FROM urls WHERE state = 'active' AND due_tick = 0;

CREATE TRIGGER urls_due_insert AFTER INSERT ON urls
WHEN new.state = 'active' AND new.due_tick <= (SELECT tick FROM countdown)
BEGIN
    INSERT INTO due (host, prio, level, id) VALUES (new.host, new.prio, new.level, new.id);
END;

-- An update that finds or leaves the URL due takes its old key out of due and puts its new one in
-- if it is due now. The WHEN clause keeps the body from running for the many updates that neither
-- find nor leave it due (a crawl recording a page that was not due, recalc restarting a countdown);
-- one trigger rather than two halves what those updates pay for it.
CREATE TRIGGER urls_due_update AFTER UPDATE OF host, prio, level, state, due_tick ON urls
WHEN (old.state = 'active' AND old.due_tick <= (SELECT tick FROM countdown))
    OR (new.state = 'active' AND new.due_tick <= (SELECT tick FROM countdown))
BEGIN
    DELETE FROM due WHERE host = old.host AND prio = old.prio AND level = old.level AND id = old.id;
    INSERT INTO due (host, prio, level, id) SELECT new.host, new.prio, new.level, new.id
    WHERE new.state = 'active' AND new.due_tick <= (SELECT tick FROM countdown);
END;

CREATE TRIGGER urls_due_delete AFTER DELETE ON urls
BEGIN
    DELETE FROM due WHERE host = old.host AND prio = old.prio AND level = old.level AND id = old.id;
END;

CREATE VIEW url_fr (id, fr) AS
    SELECT u.id, max(u.due_tick - c.tick, 0) FROM urls u, countdown c;
