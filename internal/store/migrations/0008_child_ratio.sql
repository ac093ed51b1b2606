-- Schema version 8: the share of a hub's children that changed, as the selective rule measured it
-- when the hub last came due; recalculation reads it instead of querying every hub's children again.
ALTER TABLE urls ADD COLUMN child_ratio REAL;
