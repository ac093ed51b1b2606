-- Schema version 22: dated changes (issue 17). A page's server can date its last change
-- (Last-Modified); when it tells the truth, one fetch says how long ago the page last changed,
-- which tells a page that changes daily from one that changes monthly where a dozen undated
-- visits cannot. Whether to believe a server is learnt from what strata sees: a page whose text did
-- not change must keep its date, a page whose text changed must carry a date after the last fetch.
--
-- fetches.lm_age: seconds from the change the response's Last-Modified dates to the response's Date
-- (both on the server's clock); NULL when the response dated nothing.
ALTER TABLE fetches ADD COLUMN lm_age INTEGER;
-- urls.dates_wrong: the page's dates once contradicted what strata saw; its dates are not used.
ALTER TABLE urls ADD COLUMN dates_wrong INTEGER NOT NULL DEFAULT 0 CHECK (dates_wrong IN (0, 1));
-- hosts: how often the origin's dates agreed with what strata saw, and how often they did not.
ALTER TABLE hosts ADD COLUMN dates_agreed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hosts ADD COLUMN dates_contradicted INTEGER NOT NULL DEFAULT 0;
