-- Schema version 23: an origin's hint record follows its recent hints (issue 17). The counts were
-- cumulative, so an origin right for a year kept its trust for months after its sitemap stopped
-- moving. They are now halved as they grow (store.ObserveHint): agreed and disagreed every 64
-- observations, announced, missed and false alarms every 16 checks of a change.
--
-- hosts.hints_false_alarms: fetches of pages its hints called changed that had not changed. It was
-- derived as disagreed − missed, which halving the two on different windows would break.
ALTER TABLE hosts ADD COLUMN hints_false_alarms INTEGER NOT NULL DEFAULT 0;
UPDATE hosts SET hints_false_alarms = max(hints_disagreed - hints_missed, 0);
