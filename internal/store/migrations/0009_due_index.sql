-- Schema version 9: index only the due rows. The countdown rewrites every active row's fr each run;
-- with fr in two indexes it moved two index entries per row as well. A partial index over the rows
-- with fr = 0, in the order NextDue reads them (host, then highest level first), is touched only
-- by the rows that become due or stop being due, and lets NextDue read its row without sorting.
DROP INDEX urls_due;
DROP INDEX urls_host_due;
CREATE INDEX urls_due_now ON urls (host, level DESC, id) WHERE state = 'active' AND fr = 0;
CREATE INDEX urls_host ON urls (host);
