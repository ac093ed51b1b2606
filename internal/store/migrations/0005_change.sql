-- Schema version 5: non-trivial change. digest summarises the current version's text (hash, simhash,
-- MinHash sketch) so the next fetch can be compared without reading the archive; each fetch records
-- the magnitude of its change (0 = same text, 1 = all new) and the simhash distance.
ALTER TABLE urls ADD COLUMN digest BLOB;
ALTER TABLE fetches ADD COLUMN magnitude REAL;
ALTER TABLE fetches ADD COLUMN distance INTEGER;
