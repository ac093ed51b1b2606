-- Schema version 15: which hub's selective rule left a page out of a run. strata explain names it:
-- a page can be hidden by its seed several levels up, not only by its parent.
ALTER TABLE urls ADD COLUMN skipped_by INTEGER;
