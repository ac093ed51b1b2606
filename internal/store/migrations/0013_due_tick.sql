-- Schema version 13: fr is stored as the tick it counts down to, not as the count itself. Before,
-- the countdown at the start of each run rewrote every waiting row (fr = fr - 1): 8.6 s over 1 M URLs,
-- whatever the run then crawled. Now the countdown advances one counter, countdown.tick, and writes
-- only the rows whose tick has come: about as many as the run will crawl.
--
-- urls.due_tick is 0 for a due page (the partial index urls_due_now holds exactly those), and
-- otherwise the tick at whose countdown the page comes due. The paper's fr is
-- max(due_tick - countdown.tick, 0) for a waiting page and 0 for a due one; the view url_fr shows it.
CREATE TABLE countdown (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    tick INTEGER NOT NULL CHECK (tick >= 1) -- countdowns so far, plus one
);
INSERT INTO countdown (one, tick) VALUES (1, 1);

DROP INDEX urls_due_now;
ALTER TABLE urls RENAME COLUMN fr TO due_tick;
UPDATE urls SET due_tick = 1 + due_tick WHERE due_tick > 0;
CREATE INDEX urls_due_now ON urls (host, prio DESC, level DESC, id) WHERE state = 'active' AND due_tick = 0;
CREATE INDEX urls_waiting ON urls (due_tick) WHERE state = 'active' AND due_tick > 0;

CREATE VIEW url_fr (id, fr) AS
    SELECT u.id, CASE WHEN u.due_tick = 0 THEN 0 ELSE max(u.due_tick - c.tick, 0) END
    FROM urls u, countdown c;
