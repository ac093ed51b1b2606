-- Schema version 14: what politeness must remember from one process to the next (issue 18). The
-- hosts table keeps the end of the last page fetch and robots.txt per origin, which is not enough:
-- a Crawl-delay, a slow response's longer gap, a Retry-After or an error backoff set when the next
-- request may come, and sitemaps and feeds were never recorded at all. A crawl started right after
-- another (cron, a retry, a crash) must still keep every gap the first one promised.
--
-- One row per host[:port] (as in urls.host) that was the last one contacted in its politeness
-- domain at some point; the gate restores the domain from the latest of its hosts' rows, under
-- whatever politeness.domain_key is in force then.
CREATE TABLE politeness (
    host           TEXT PRIMARY KEY,
    last_end_at    TEXT,                       -- end of the domain's last response, seen from this host's process
    next_at        TEXT,                       -- earliest start of the domain's next request
    crawl_delay_ms INTEGER NOT NULL DEFAULT 0, -- the domain's largest robots.txt Crawl-delay in that process
    unreachable    INTEGER NOT NULL DEFAULT 0  -- runs in a row in which the host could not be reached
) WITHOUT ROWID;
