package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Record is one fetch of a page as the frequency policies see it.
type Record struct {
	Run     int64
	Changed bool
	Failed  bool // no usable answer (no response, 3xx, 4xx, 5xx): no evidence about change
	// Dated: the response's Last-Modified dated the page's last change, Age before the response
	// (fetches.lm_age). Whether to believe it is the reader's decision (Dates, PageHistory.DatesWrong).
	Dated bool
	Age   time.Duration
}

// recordFields are the columns of a fetch that make a Record.
const recordFields = `f.url_id, coalesce(f.run_id, 0) AS run_id, f.changed, NOT (f.status = 200 OR f.not_modified) AS failed`

// PageHistory is a page crawled in a run, with its last records, oldest first.
type PageHistory struct {
	URLID      int64
	URL        string
	FrMax      int
	Level      int
	Threshold  float64
	ChildRatio float64 // share of its children that changed, as last measured; -1 when not a judged hub
	DatesWrong bool    // the page's Last-Modified once contradicted what strata saw (urls.dates_wrong)
	Records    []Record
}

// RunHistories calls fn for every page that got a response in run, with its last limit records,
// oldest first, in URL id order. For limit <= RecentCap the records come from the pages' own rows
// (urls.recent), so the run's fetch history is not read at all; a larger limit reads it from the
// fetches table.
//
// From the rows, the pages are read historyChunk at a time, each chunk in a read transaction of its
// own that ends before fn sees the chunk's pages, so memory is 8 bytes per fetch of the run plus one
// chunk. That matters to a caller that writes from fn, as recalc does: one query streaming the
// whole run would hold a read transaction that keeps SQLite from checkpointing the WAL behind those
// writes, so the WAL would grow with all of them and every commit would sort it again trying to
// checkpoint (7 s of CPU in a 1 M-page recalc, growing with the square of the run's size). The
// price: a page's row is read after fn has seen the pages before its chunk, so what fn writes to
// pages it has not been given yet shows in them. Recalc writes only pages it has been given.
func (db *DB) RunHistories(ctx context.Context, run int64, limit int, fn func(PageHistory) error) error {
	if limit < 1 || limit > RecentCap {
		return db.runHistoriesFromFetches(ctx, run, limit, fn)
	}
	ids, err := db.runPages(ctx, run)
	if err != nil {
		return fmt.Errorf("histories of run %d: %w", run, err)
	}
	for len(ids) > 0 {
		chunk := ids[:min(historyChunk, len(ids))]
		ids = ids[len(chunk):]
		hs, err := db.recentHistories(ctx, chunk, limit)
		if err != nil {
			return fmt.Errorf("histories of run %d: %w", run, err)
		}
		for _, h := range hs {
			if err := fn(h); err != nil {
				return err
			}
		}
	}
	return nil
}

// historyChunk is how many pages RunHistories reads per query from the rows.
const historyChunk = 1000

// runPages returns the ids of the pages that got a response in run, in order. They are sorted and
// made unique here rather than with SQLite's DISTINCT … ORDER BY, whose temporary B-tree was slower
// (RunHistories at 1 M pages: 3.3 s with it, 3.1 s without; one sample each).
func (db *DB) runPages(ctx context.Context, run int64) ([]int64, error) {
	// Counted first (from the index alone) so that the slice is allocated once: growing it took
	// a third of this function's 0.7 s of CPU at 1 M pages, while recalc's writer waited for it.
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM fetches WHERE run_id = ?`, run).Scan(&n); err != nil {
		return nil, err
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT url_id FROM fetches WHERE run_id = ? AND status > 0`, run)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := make([]int64, 0, n)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// recentHistories reads the pages with the given ids (ascending) and their last limit records from
// their rows. When the ids are dense, as a run that crawled most of the table makes them, it reads
// the range between the first and the last and skips the rows not asked for: binding a thousand
// parameters for "id IN (…)" cost more than reading the few rows in between.
func (db *DB) recentHistories(ctx context.Context, ids []int64, limit int) ([]PageHistory, error) {
	const columns = `SELECT id, url, fr_max, level, threshold, coalesce(child_ratio, -1), dates_wrong, recent FROM urls`
	var rows *sql.Rows
	var err error
	if span := ids[len(ids)-1] - ids[0] + 1; span <= 2*int64(len(ids)) {
		rows, err = db.sql.QueryContext(ctx, columns+` WHERE id BETWEEN ? AND ? ORDER BY id`, ids[0], ids[len(ids)-1])
	} else {
		args := make([]any, len(ids))
		for i, id := range ids {
			args[i] = id
		}
		rows, err = db.sql.QueryContext(ctx, columns+` WHERE id IN (`+placeholders(len(ids))+`) ORDER BY id`, args...)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	hs := make([]PageHistory, 0, len(ids))
	for rows.Next() {
		var h PageHistory
		var blob []byte
		if err := rows.Scan(&h.URLID, &h.URL, &h.FrMax, &h.Level, &h.Threshold, &h.ChildRatio, &h.DatesWrong, &blob); err != nil {
			return nil, err
		}
		for len(ids) > 0 && ids[0] < h.URLID {
			ids = ids[1:]
		}
		if len(ids) == 0 || ids[0] != h.URLID {
			continue // in the range, not in the run
		}
		recs, err := decodeRecent(blob)
		if err != nil {
			return nil, fmt.Errorf("URL %d: %w", h.URLID, err)
		}
		h.Records = recs[max(0, len(recs)-limit):]
		hs = append(hs, h)
	}
	return hs, rows.Err()
}

// runHistoriesFromFetches is RunHistories read from the fetch history, for limits above RecentCap:
// it ranks every record of the run's pages, which sorts them all.
func (db *DB) runHistoriesFromFetches(ctx context.Context, run int64, limit int, fn func(PageHistory) error) error {
	rows, err := db.sql.QueryContext(ctx, `WITH pages AS (
			SELECT DISTINCT url_id FROM fetches WHERE run_id = ?1 AND status > 0),
		ranked AS (
			SELECT `+recordFields+`, f.lm_age, f.id,
				row_number() OVER (PARTITION BY f.url_id ORDER BY f.id DESC) AS rn
			FROM fetches f JOIN pages p ON p.url_id = f.url_id)
		SELECT r.url_id, u.url, u.fr_max, u.level, u.threshold, coalesce(u.child_ratio, -1), u.dates_wrong,
			r.run_id, r.changed, r.failed, r.lm_age
		FROM ranked r JOIN urls u ON u.id = r.url_id
		WHERE r.rn <= ?2 ORDER BY r.url_id, r.id`, run, limit)
	if err != nil {
		return fmt.Errorf("histories of run %d: %w", run, err)
	}
	defer rows.Close()
	var cur *PageHistory
	for rows.Next() {
		var id int64
		var h PageHistory
		var r Record
		var age sql.NullInt64
		if err := rows.Scan(&id, &h.URL, &h.FrMax, &h.Level, &h.Threshold, &h.ChildRatio, &h.DatesWrong,
			&r.Run, &r.Changed, &r.Failed, &age); err != nil {
			return fmt.Errorf("histories of run %d: %w", run, err)
		}
		r.Dated, r.Age = age.Valid, time.Duration(age.Int64)*time.Second
		if cur != nil && cur.URLID != id {
			if err := fn(*cur); err != nil {
				return err
			}
			cur = nil
		}
		if cur == nil {
			h.URLID = id
			cur = &h
		}
		cur.Records = append(cur.Records, r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("histories of run %d: %w", run, err)
	}
	if cur != nil {
		return fn(*cur)
	}
	return nil
}

// RecentCap is how many of its last records a page's row keeps (urls.recent): at least the
// frequency.limit users set in practice (default 10), so recalc reads no fetch history. A limit
// above it (the configuration allows up to 1000) is served from the fetches table, slower.
// Migration 0012_recent.sql backfills with the same number.
const RecentCap = 64

// The encoding of urls.recent, a page's last RecentCap records, oldest first. Byte 0 is the
// format. In format 1 (which migration 0012_recent.sql writes, in SQL) each record is one unsigned
// varint (encoding/binary):
//
//	zigzag(run - previous run) << 2 | changed << 1 | failed
//
// where the first record's previous run is 0 and zigzag maps 0, -1, 1, -2, … to 0, 1, 2, 3, … (a
// fetch outside a run has run 0, so deltas can be negative). A page fetched once per run thus
// costs one byte per record. Format 2, which strata writes since schema 22, adds a dated change:
//
//	zigzag(run - previous run) << 3 | dated << 2 | changed << 1 | failed
//
// followed, for a dated record, by a second varint: its age in whole minutes. A NULL or empty blob
// holds no records; a blob of either format is read, and rewritten as format 2 when a record is
// appended.
const (
	recentFormat1 = 1
	recentFormat  = 2
	// maxRecentRun bounds run ids so that a delta, zigzagged and shifted, fits in an int64, which
	// the migration's SQL arithmetic needs. Run ids are SQLite rowids counting up from 1.
	maxRecentRun = 1 << 59
	// maxRecentAge bounds a dated record's age: older than ten years is as good as never.
	maxRecentAge = 10 * 365 * 24 * time.Hour
)

// errRecent is the error of a urls.recent blob that does not decode.
var errRecent = errors.New("malformed recent records")

// decodeRecent returns the records of a urls.recent blob, oldest first.
func decodeRecent(blob []byte) ([]Record, error) {
	if len(blob) == 0 {
		return nil, nil
	}
	shift := uint(3)
	switch blob[0] {
	case recentFormat:
	case recentFormat1:
		shift = 2
	default:
		return nil, fmt.Errorf("%w: format %d, want %d or %d", errRecent, blob[0], recentFormat1, recentFormat)
	}
	recs := make([]Record, 0, len(blob)-1)
	var run int64
	for b := blob[1:]; len(b) > 0; {
		v, n := binary.Uvarint(b)
		if n <= 0 || v >= 1<<63 {
			return nil, fmt.Errorf("%w: bad varint at record %d", errRecent, len(recs))
		}
		b = b[n:]
		z := v >> shift
		delta := int64(z >> 1)
		if z&1 != 0 {
			delta = -delta - 1
		}
		run += delta
		if run < 0 || run >= maxRecentRun {
			return nil, fmt.Errorf("%w: run %d out of range at record %d", errRecent, run, len(recs))
		}
		r := Record{Run: run, Changed: v&2 != 0, Failed: v&1 != 0}
		if shift == 3 && v&4 != 0 {
			minutes, n := binary.Uvarint(b)
			if n <= 0 || minutes > uint64(maxRecentAge/time.Minute) {
				return nil, fmt.Errorf("%w: bad age at record %d", errRecent, len(recs))
			}
			b = b[n:]
			r.Dated, r.Age = true, time.Duration(minutes)*time.Minute
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// encodeRecent encodes the last RecentCap of recs (oldest first) as a urls.recent blob, format 2.
// Ages are kept in whole minutes, at most maxRecentAge.
func encodeRecent(recs []Record) ([]byte, error) {
	recs = recs[max(0, len(recs)-RecentCap):]
	blob := make([]byte, 1, 1+len(recs))
	blob[0] = recentFormat
	var prev int64
	for _, r := range recs {
		if r.Run < 0 || r.Run >= maxRecentRun {
			return nil, fmt.Errorf("encode recent records: run %d out of range", r.Run)
		}
		d := r.Run - prev
		prev = r.Run
		z := uint64(d) << 1
		if d < 0 {
			z = uint64(-d)<<1 - 1
		}
		v := z << 3
		if r.Dated {
			v |= 4
		}
		if r.Changed {
			v |= 2
		}
		if r.Failed {
			v |= 1
		}
		blob = binary.AppendUvarint(blob, v)
		if r.Dated {
			blob = binary.AppendUvarint(blob, uint64(min(max(r.Age, 0), maxRecentAge)/time.Minute))
		}
	}
	return blob, nil
}

// appendRecent returns blob with r appended as its newest record, keeping the last RecentCap.
func appendRecent(blob []byte, r Record) ([]byte, error) {
	recs, err := decodeRecent(blob)
	if err != nil {
		return nil, err
	}
	return encodeRecent(append(recs, r))
}

// FrMaxUpdate is a recalculated revisit interval, with the page's estimated change rate.
type FrMaxUpdate struct {
	URLID  int64
	FrMax  int
	Was    int     // the interval it replaces, as the page's history had it (0: unknown)
	Rate   float64 // changes per run; < 0 when there is no estimate yet
	Bucket uint8
}

// SetFrMax stores recalculated intervals in one transaction. The pages were crawled in the run just
// finished, so their countdown restarts from the new interval.
//
// Most pages keep their interval, and their crawl already restarted the countdown from it: for them
// only the rate is written, not due_tick, whose every change moves the row's entry in urls_waiting
// and runs the due table's triggers. A page whose interval changed, or whose countdown turns out
// not to be at its interval, gets due_tick too.
func (db *DB) SetFrMax(ctx context.Context, updates []FrMaxUpdate) error {
	for _, u := range updates {
		if u.FrMax < 1 {
			return fmt.Errorf("store revisit interval of URL %d: %d runs, want at least 1", u.URLID, u.FrMax)
		}
	}
	err := db.inBulkTx(ctx, func(tx *sql.Tx) error {
		var tick int64
		if err := tx.QueryRowContext(ctx, `SELECT tick FROM countdown`).Scan(&tick); err != nil {
			return err
		}
		// OR IGNORE because no constraint can fail here (the values are checked above and the
		// bucket is a byte), and a statement that cannot abort needs no statement journal: with
		// the update trigger, every restart kept one, about 1 µs of a 10 µs update (measured on
		// 200,000 restarts at 1 M URLs: 2.57-2.64 s against 2.68-2.90 s).
		const rate = `change_rate = CASE WHEN ?3 >= 0 THEN ?3 ELSE change_rate END,
			rate_bucket = CASE WHEN ?3 >= 0 THEN ?4 ELSE rate_bucket END`
		same, err := tx.PrepareContext(ctx, `UPDATE OR IGNORE urls SET fr_max = ?1, `+rate+` WHERE id = ?2 AND due_tick = ?5`)
		if err != nil {
			return err
		}
		defer same.Close()
		restart, err := tx.PrepareContext(ctx, `UPDATE OR IGNORE urls SET fr_max = ?1, due_tick = ?5, `+rate+` WHERE id = ?2`)
		if err != nil {
			return err
		}
		defer restart.Close()
		for _, u := range updates {
			ctx, err := rowCtx(ctx)
			if err != nil {
				return err
			}
			due := tick + int64(u.FrMax)
			if u.FrMax == u.Was {
				res, err := same.ExecContext(ctx, u.FrMax, u.URLID, u.Rate, u.Bucket, due)
				if err != nil {
					return err
				}
				if n, _ := res.RowsAffected(); n > 0 {
					continue
				}
			}
			if _, err := restart.ExecContext(ctx, u.FrMax, u.URLID, u.Rate, u.Bucket, due); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store %d revisit intervals: %w", len(updates), err)
	}
	return nil
}
