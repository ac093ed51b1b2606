-- Schema version 7: each page's estimated change rate (changes per run, Cho's estimator over its
-- fetch history), recalculated with its fr_max; rate_bucket is the one-byte log-spaced bucket of it.
ALTER TABLE urls ADD COLUMN change_rate REAL;
