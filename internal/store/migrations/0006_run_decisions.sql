-- Schema version 6: every decision of the selective rule counted in the run's row: hubs judged, and
-- hubs whose subtree was visited although the hub had not changed (skipped pages are in
-- skipped_selective already).
ALTER TABLE runs ADD COLUMN hubs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN hubs_reentered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN trap_events INTEGER NOT NULL DEFAULT 0;
