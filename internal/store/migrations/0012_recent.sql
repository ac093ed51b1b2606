-- Schema version 12: each page's last fetch records in its own row. Recalculating fr_max needs only
-- the last frequency.limit records of every page crawled in a run (run, changed, failed); reading
-- them from fetches sorted all the run's pages' records (10 M rows for 1 M pages) on every recalc.
-- recent keeps the last 64 (store.RecentCap), appended by every RecordFetch in the transaction that
-- inserts the fetch. NULL: never fetched.
--
-- The encoding (internal/store/recalc.go, decodeRecent): byte 0 is the format, 1; then one unsigned
-- LEB128 varint per record, oldest first: zigzag(run - previous run) << 2 | changed << 1 | failed,
-- the first record's previous run being 0, run = coalesce(run_id, 0), failed = NOT (status = 200 OR
-- not_modified). zigzag(d) is 2d for d >= 0, -2d - 1 below.
ALTER TABLE urls ADD COLUMN recent BLOB;

-- The backfill: for each page its last 64 fetches (through the fetches_url index), each record's
-- varint written as hex, in order, then unhex'd. A varint byte k (k = 0…8) is present when v >= 2^(7k)
-- and has its high bit set when v >= 2^(7(k+1)). Pages never fetched get NULL ('01' || NULL).
UPDATE urls SET recent = (
    SELECT unhex('01' || group_concat(
        printf('%02X', (v & 127) | (v >= 128) * 128)
        || CASE WHEN v >= 128 THEN printf('%02X', ((v >> 7) & 127) | (v >= 16384) * 128) ELSE '' END
        || CASE WHEN v >= 16384 THEN printf('%02X', ((v >> 14) & 127) | (v >= 2097152) * 128) ELSE '' END
        || CASE WHEN v >= 2097152 THEN printf('%02X', ((v >> 21) & 127) | (v >= 268435456) * 128) ELSE '' END
        || CASE WHEN v >= 268435456 THEN printf('%02X', ((v >> 28) & 127) | (v >= 34359738368) * 128) ELSE '' END
        || CASE WHEN v >= 34359738368 THEN printf('%02X', ((v >> 35) & 127) | (v >= 4398046511104) * 128) ELSE '' END
        || CASE WHEN v >= 4398046511104 THEN printf('%02X', ((v >> 42) & 127) | (v >= 562949953421312) * 128) ELSE '' END
        || CASE WHEN v >= 562949953421312 THEN printf('%02X', ((v >> 49) & 127) | (v >= 72057594037927936) * 128) ELSE '' END
        || CASE WHEN v >= 72057594037927936 THEN printf('%02X', (v >> 56) & 127) ELSE '' END,
        '' ORDER BY id))
    FROM (
        SELECT id, ((CASE WHEN d >= 0 THEN 2 * d ELSE -2 * d - 1 END) << 2) | (changed << 1) | failed AS v
        FROM (
            SELECT id, changed, failed, run - coalesce(lag(run) OVER (ORDER BY id), 0) AS d
            FROM (
                SELECT id, coalesce(run_id, 0) AS run, changed, NOT (status = 200 OR not_modified) AS failed
                FROM fetches WHERE url_id = urls.id ORDER BY id DESC LIMIT 64))));
