package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// The SQL fragments of the countdown, as in the SQLite store (internal/store/frontier.go): fr is
// kept as the tick it counts down to (urls.due_tick), and the due table holds exactly the active
// URLs whose tick has come and that no trap rule holds (its triggers, migration 0001, keep it so).

// tickNow is the countdown's current tick, in SQL.
const tickNow = `(SELECT tick FROM countdown)`

// dueIn is the SQL for the due_tick of a page that comes due in runs runs (0: due now).
func dueIn(runs string) string {
	return `(CASE WHEN ` + runs + ` > 0 THEN ` + tickNow + ` + ` + runs + ` ELSE 0 END)`
}

// frOf is the SQL for the fr of a row whose due_tick column is dueTick.
func frOf(dueTick string) string {
	return `greatest(` + dueTick + ` - ` + tickNow + `, 0)`
}

// isDue is the SQL condition for a due row of urls: it has a row in the due table.
const isDue = `urls.state = 'active' AND urls.due_tick <= ` + tickNow + ` AND ` + notHeld

// notHeld is the SQL condition for a row of urls that no trap rule holds.
const notHeld = `NOT EXISTS (SELECT 1 FROM trap_holds h WHERE h.url_id = urls.id AND h.released = 0)`

// snapshotRoots is the SQL set of the snapshot seeds' ids (store's snapshot.go).
const snapshotRoots = `(SELECT id FROM urls WHERE is_seed = 1 AND snapshot = 1)`

// inSnapshot is the SQL truth of "the row of urls is below a snapshot seed". SQLite's
// root_id IN (…) is NULL for a row without a root when some seed is a snapshot one, which its
// driver could not scan into a bool; here it is false.
const inSnapshot = `coalesce(urls.root_id IN ` + snapshotRoots + `, false)`

// snapshotDue is the SQL condition for an active page the countdown makes due because its seed asks
// for a snapshot every run, unless its host is being backed off as unreachable.
const snapshotDue = `state = 'active' AND root_id IN ` + snapshotRoots + `
	AND host NOT IN (SELECT host FROM politeness WHERE unreachable > 0)`

// Countdown moves every active URL one run closer to being due and returns how many are due and
// how many still wait: store.DB.Countdown.
func (db *DB) Countdown(ctx context.Context) (due, waiting int, err error) {
	err = db.write(ctx, func(tx pgx.Tx) error {
		var tick, filled int64
		if err := takeBackProbes(ctx, tx); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `UPDATE countdown SET tick = tick + 1 RETURNING tick, filled`).Scan(&tick, &filled); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE urls SET due_tick = $1 WHERE state = 'active' AND last_status = 404 AND due_tick > $1`, tick); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE urls SET due_tick = $1 WHERE `+snapshotDue+` AND due_tick > $1`, tick); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO due (host, prio, level, id)
			SELECT host, prio, level, id FROM urls WHERE state = 'active' AND due_tick > 0 AND due_tick > $1 AND due_tick <= $2
			AND NOT EXISTS (SELECT 1 FROM trap_holds h WHERE h.url_id = urls.id AND h.released = 0)
			ON CONFLICT DO NOTHING`, min(filled, tick-1), tick); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE countdown SET filled = $1`, tick); err != nil {
			return err
		}
		if err := releaseProbes(ctx, tx, tick); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM due`).Scan(&due); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM urls WHERE state = 'active' AND due_tick > 0 AND due_tick > $1`, tick).Scan(&waiting)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("countdown: %w", err)
	}
	return due, waiting, nil
}

// takeBackProbes puts the probes the last run fetched back under their rules and lets go of the
// holds on inactive URLs and of rules that no longer throttle (store's takeBackProbes).
func takeBackProbes(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `DELETE FROM trap_holds WHERE rule_id IN (SELECT id FROM trap_rules WHERE state <> 'throttled')`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM trap_holds WHERE (SELECT state FROM urls WHERE id = trap_holds.url_id) <> 'active'`); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE trap_holds SET released = 0 WHERE released > 0
		AND (SELECT due_tick FROM urls WHERE id = trap_holds.url_id) > `+tickNow)
	return err
}

// releaseProbes lets each throttled rule whose probe is due release its probes (store's
// releaseProbes).
func releaseProbes(ctx context.Context, tx pgx.Tx, tick int64) error {
	rows, err := tx.Query(ctx, `SELECT id, probes FROM trap_rules r WHERE state = 'throttled' AND $1 >= probed_tick + probe_every
		AND NOT EXISTS (SELECT 1 FROM trap_holds o WHERE o.rule_id = r.id AND o.released > 0)`, tick)
	if err != nil {
		return err
	}
	type ready struct{ id, probes int64 }
	rules, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ready, error) {
		var x ready
		return x, r.Scan(&x.id, &x.probes)
	})
	if err != nil {
		return err
	}
	for _, r := range rules {
		tag, err := tx.Exec(ctx, `UPDATE trap_holds SET released = $1 WHERE url_id IN (
			SELECT h.url_id FROM trap_holds h JOIN urls u ON u.id = h.url_id
			WHERE h.rule_id = $2 AND h.released = 0 AND u.state = 'active' AND u.due_tick <= $1
			ORDER BY u.date IS NOT NULL, coalesce(u.date, u.added_at), h.url_id LIMIT $3)`, tick, r.id, r.probes)
		if err != nil {
			return err
		}
		if tag.RowsAffected() > 0 {
			if _, err := tx.Exec(ctx, `UPDATE trap_rules SET probed_tick = $1 WHERE id = $2`, tick, r.id); err != nil {
				return err
			}
		}
	}
	return nil
}

// DueHosts lists the hosts that have due URLs, with how many each has.
func (db *DB) DueHosts(ctx context.Context) (map[string]int, error) {
	return db.hostCounts(ctx, "due hosts", `SELECT host, count(*) FROM due GROUP BY host`)
}

// DueAmong returns, per host, how many of the URLs with the given ids are due.
func (db *DB) DueAmong(ctx context.Context, ids []int64) (map[string]int, error) {
	return db.hostCounts(ctx, "due hosts", `SELECT host, count(*) FROM urls WHERE id = ANY($1::bigint[])
		AND `+isDue+` GROUP BY host`, ids)
}

// dueColumns are the columns of urls that make a store.DueURL, in scanDue's order.
const dueColumns = `urls.id, urls.url, urls.host, urls.level, urls.fr_max, urls.etag, urls.last_modified, urls.content_hash,
		urls.root_id, urls.is_seed = 1, urls.threshold, urls.digest,
		(SELECT archive_path FROM fetches f WHERE f.url_id = urls.id AND f.archive_path IS NOT NULL ORDER BY f.id DESC LIMIT 1),
		urls.date IS NULL, urls.change_rate,
		(SELECT f.run_id FROM fetches f WHERE f.url_id = urls.id AND (f.status = 200 OR f.not_modified = 1) ORDER BY f.id DESC LIMIT 1),
		urls.site_date, urls.hint_lastmod, urls.text_mode, coalesce(urls.child_ratio, -1)`

// scanDue reads a row of dueColumns.
func scanDue(row pgx.Row) (*store.DueURL, error) {
	var d store.DueURL
	var etag, lm, hash, archived, siteDate, hint, textMode *string
	var root, lastRun *int64
	var rate *float64
	err := row.Scan(&d.ID, &d.URL, &d.Host, &d.Level, &d.FrMax, &etag, &lm, &hash, &root, &d.IsSeed, &d.Threshold, &d.Digest, &archived,
		&d.New, &rate, &lastRun, &siteDate, &hint, &textMode, &d.ChildRatio)
	if err != nil {
		return nil, err
	}
	d.HubStored = true
	d.ETag, d.LastModified, d.ContentHash, d.RootID = deref(etag), deref(lm), deref(hash), deref(root)
	d.ArchivePath, d.ChangeRate, d.LastRun = deref(archived), deref(rate), deref(lastRun)
	d.SiteDate, d.HintLastMod, d.TextMode = parseTime(siteDate), deref(hint), deref(textMode)
	return &d, nil
}

// deref is *p, or the zero value for nil (a NULL column).
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// NextDue returns the due URL among q.Hosts to crawl next, or an error wrapping store.ErrNotFound:
// store.DB.NextDue.
func (db *DB) NextDue(ctx context.Context, q store.DueQuery) (*store.DueURL, error) {
	args := []any{q.Hosts, q.Run}
	restrict := ""
	switch q.Kind {
	case store.DueNew:
		restrict = ` AND urls.date IS NULL`
	case store.DueKnown:
		restrict = ` AND urls.date IS NOT NULL`
	}
	if q.Sample != store.SampleAny && q.History > 0 {
		sampled := `(urls.date IS NOT NULL AND (SELECT count(*) FROM (SELECT 1 FROM fetches f WHERE f.url_id = urls.id
			AND (f.status = 200 OR f.not_modified = 1) LIMIT $3) s) < $3)`
		if q.Sample == store.SampleQueue {
			sampled = `NOT ` + sampled
		}
		restrict += ` AND ` + sampled
		args = append(args, q.History)
	}
	if len(q.Only) > 0 {
		restrict += fmt.Sprintf(` AND urls.id = ANY($%d::bigint[])`, len(args)+1)
		args = append(args, q.Only)
	}
	d, err := scanDue(db.pool.QueryRow(ctx, `SELECT `+dueColumns+`
		FROM due d JOIN urls ON urls.id = d.id WHERE d.host = ANY($1::text[])
		AND (urls.skipped_run IS NULL OR urls.skipped_run <> $2)`+restrict+` ORDER BY d.prio DESC, d.level DESC, d.id LIMIT 1`, args...))
	if notFound(err) {
		return nil, fmt.Errorf("next due URL of %v: %w", q.Hosts, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("next due URL of %v: %w", q.Hosts, err)
	}
	d.Sampled = q.Sample == store.SampleOnly
	return d, nil
}

// DueByID returns URL id to crawl now, or an error wrapping store.ErrNotFound when it is not due
// any more.
func (db *DB) DueByID(ctx context.Context, id, run int64) (*store.DueURL, error) {
	d, err := scanDue(db.pool.QueryRow(ctx, `SELECT `+dueColumns+` FROM urls WHERE urls.id = $1 AND `+isDue+`
		AND (urls.skipped_run IS NULL OR urls.skipped_run <> $2)`, id, run))
	if notFound(err) {
		return nil, fmt.Errorf("due URL %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("due URL %d: %w", id, err)
	}
	return d, nil
}

// candidateColumns are the columns of urls that make a store.Candidate, in scanCandidates' order.
const candidateColumns = `urls.id, urls.url, urls.host, urls.level, urls.date IS NULL, urls.fr_max, coalesce(urls.change_rate, -1),
		urls.weight, urls.recent, urls.hint_lastmod, urls.site_date, urls.date, ` + inSnapshot

// NextCandidates calls fn for at most n known, active URLs that are not due yet, those whose turn
// comes soonest first, and were not fetched since runStart.
func (db *DB) NextCandidates(ctx context.Context, runStart time.Time, n int, fn func(store.Candidate) error) error {
	rows, err := db.pool.Query(ctx, `SELECT `+candidateColumns+`
		FROM urls WHERE state = 'active' AND due_tick > 0 AND due_tick > `+tickNow+` AND date IS NOT NULL AND date < $1
		ORDER BY due_tick, id LIMIT $2`, formatTime(runStart), n)
	if err != nil {
		return fmt.Errorf("next candidates: %w", err)
	}
	return scanCandidates(rows, fn)
}

// DueCandidates calls fn for every URL that is due in run, in id order.
func (db *DB) DueCandidates(ctx context.Context, run int64, fn func(store.Candidate) error) error {
	rows, err := db.pool.Query(ctx, `SELECT `+candidateColumns+`
		FROM due d JOIN urls ON urls.id = d.id WHERE urls.skipped_run IS NULL OR urls.skipped_run <> $1 ORDER BY urls.id`, run)
	if err != nil {
		return fmt.Errorf("due candidates: %w", err)
	}
	return scanCandidates(rows, fn)
}

// scanCandidates reads the rows of DueCandidates' and NextCandidates' queries. The rows are read
// whole before fn sees any, since fn may write and a pgx connection serves one query at a time.
func scanCandidates(rows pgx.Rows, fn func(store.Candidate) error) error {
	cs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Candidate, error) {
		var c store.Candidate
		var blob []byte
		var hint, siteDate, date *string
		if err := row.Scan(&c.ID, &c.URL, &c.Host, &c.Level, &c.New, &c.FrMax, &c.Rate, &c.Weight, &blob, &hint, &siteDate, &date, &c.Snapshot); err != nil {
			return c, err
		}
		recs, err := store.DecodeRecent(blob)
		if err != nil {
			return c, fmt.Errorf("URL %d: %w", c.ID, err)
		}
		c.Records = recs
		c.HintLastMod, c.SiteDate, c.LastFetch = deref(hint), parseTime(siteDate), parseTime(date)
		return c, nil
	})
	if err != nil {
		return fmt.Errorf("due candidates: %w", err)
	}
	for _, c := range cs {
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// Enqueue makes u due in the current run and returns its id and what it did: store.DB.Enqueue.
// Each step is one statement that locks what it writes: an insert racing another of the same URL
// waits for it and then finds the row, and the UPDATE re-checks its condition on the row it locks.
func (db *DB) Enqueue(ctx context.Context, u store.NewURL, runStart time.Time) (id int64, what store.Enqueued, err error) {
	err = db.rows(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO urls (url, host, level, due_tick, fr_max, parent_id, root_id, added_at)
			VALUES ($1, $2, $3, 0, $4, $5, $6, $7) ON CONFLICT (url) DO NOTHING RETURNING id`,
			u.URL, u.Host, u.Level, u.FrMax, idOrNull(u.ParentID), idOrNull(u.RootID), formatTime(db.now())).Scan(&id)
		if err == nil {
			what = store.EnqueuedNew
			return nil
		}
		if !notFound(err) {
			return err
		}
		err = tx.QueryRow(ctx, `UPDATE urls SET due_tick = 0, level = greatest(level, $1)
			WHERE url = $2 AND state = 'active' AND (date IS NULL OR date < $3) RETURNING id`,
			u.Level, u.URL, formatTime(runStart)).Scan(&id)
		if err == nil {
			what = store.EnqueuedDue
			return nil
		}
		if !notFound(err) {
			return err
		}
		what = store.EnqueuedKnown
		return tx.QueryRow(ctx, `SELECT id FROM urls WHERE url = $1`, u.URL).Scan(&id)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("enqueue %s: %w", u.URL, err)
	}
	return id, what, nil
}

// Discover records URLs found on a page in one transaction and returns those it inserted:
// store.DB.Discover.
func (db *DB) Discover(ctx context.Context, found []store.NewURL) ([]store.NewURL, error) {
	found, err := db.ToDiscover(ctx, found)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	var isNew []bool
	now := formatTime(db.now())
	err = db.rows(ctx, func(tx pgx.Tx) error {
		isNew, err = writeDiscovered(ctx, tx, found, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record %d discovered URLs: %w", len(found), err)
	}
	var added []store.NewURL
	for i, u := range found {
		if isNew[i] {
			added = append(added, u)
		}
	}
	return added, nil
}

// recordFound writes the URLs the records found (store.FetchRecord.Found) within their fetches'
// transaction tx, all of them in URL order as Discover writes, and sets each one's Added. It runs
// before the fetches lock their URL rows: found URLs by URL, then fetched URLs by id, then origins
// by origin, the same order in every transaction that records fetches.
func recordFound(ctx context.Context, tx pgx.Tx, recs []store.FetchRecord, now string) error {
	var found []store.NewURL
	var owner []*store.Found
	for _, r := range recs {
		if r.Found == nil {
			continue
		}
		r.Found.Added = nil // the transaction may be a retry
		for _, u := range r.Found.URLs {
			found = append(found, u)
			owner = append(owner, r.Found)
		}
	}
	if len(found) == 0 {
		return nil
	}
	isNew, err := writeDiscovered(ctx, tx, found, now)
	if err != nil {
		return fmt.Errorf("record %d URLs found on the pages: %w", len(found), err)
	}
	for i, u := range found {
		if isNew[i] {
			owner[i].Added = append(owner[i].Added, u)
		}
	}
	return nil
}

// clearFound drops what recordFound set when its transaction did not commit.
func clearFound(recs []store.FetchRecord) {
	for _, r := range recs {
		if r.Found != nil {
			r.Found.Added = nil
		}
	}
}

// writeDiscovered inserts the new URLs of found (held by their Hold rule, if any) and raises the
// level of the known ones found at a higher level; isNew[i] says whether found[i] was inserted. A
// URL listed twice is inserted once, for its first listing.
func writeDiscovered(ctx context.Context, tx pgx.Tx, found []store.NewURL, now string) (isNew []bool, err error) {
	// Written in URL order: two pages that link to the same new URLs in different orders would
	// otherwise each insert one and wait for the other's, a deadlock.
	order := make([]int, len(found))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(found[a].URL, found[b].URL) })
	isNew = make([]bool, len(found))
	for _, i := range order {
		u := found[i]
		var id int64
		err := tx.QueryRow(ctx, `INSERT INTO urls (url, host, level, due_tick, fr_max, parent_id, root_id, added_at)
			VALUES ($1, $2, $3, 0, $4, $5, $6, $7) ON CONFLICT (url) DO NOTHING RETURNING id`,
			u.URL, u.Host, u.Level, u.FrMax, idOrNull(u.ParentID), idOrNull(u.RootID), now).Scan(&id)
		if err == nil {
			if u.Hold != 0 {
				if _, err := tx.Exec(ctx, `INSERT INTO trap_holds (url_id, rule_id) VALUES ($1, $2)`, id, u.Hold); err != nil {
					return nil, err
				}
			}
			isNew[i] = true
			continue
		}
		if !notFound(err) {
			return nil, err
		}
		if _, err := tx.Exec(ctx, `UPDATE urls SET level = $1 WHERE url = $2 AND level < $1`, u.Level, u.URL); err != nil {
			return nil, err
		}
	}
	return isNew, nil
}

// ToDiscover returns the URLs of found that Discover has to write: those not in the table, and
// those whose level it would raise. Most links of a page are known already, and a read locks no
// row.
func (db *DB) ToDiscover(ctx context.Context, found []store.NewURL) ([]store.NewURL, error) {
	if len(found) == 0 {
		return nil, nil
	}
	urls := make([]string, len(found))
	for i, u := range found {
		urls[i] = u.URL
	}
	rows, err := db.pool.Query(ctx, `SELECT url, level FROM urls WHERE url = ANY($1::text[])`, urls)
	if err != nil {
		return nil, fmt.Errorf("look up %d discovered URLs: %w", len(found), err)
	}
	known := make(map[string]int, len(found))
	var u string
	var level int
	if _, err := pgx.ForEachRow(rows, []any{&u, &level}, func() error {
		known[u] = level
		return nil
	}); err != nil {
		return nil, fmt.Errorf("look up %d discovered URLs: %w", len(found), err)
	}
	var write []store.NewURL
	for _, u := range found {
		if level, ok := known[u.URL]; !ok || level < u.Level {
			write = append(write, u)
		}
	}
	return write, nil
}

// SetDue makes the pages in due due now (fr = 0) and those in notDue wait one more run (fr = 1).
func (db *DB) SetDue(ctx context.Context, due, notDue []int64) error {
	err := db.rows(ctx, func(tx pgx.Tx) error {
		for _, set := range []struct {
			ids []int64
			fr  int64
		}{{due, 0}, {notDue, 1}} {
			if len(set.ids) == 0 {
				continue
			}
			if _, err := tx.Exec(ctx, `UPDATE urls SET due_tick = `+dueIn("$1::bigint")+`, hint_deferred = 0 WHERE id = ANY($2::bigint[])
				AND `+frOf("due_tick")+` <> $1::bigint`, set.fr, set.ids); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set pages due by release day: %w", err)
	}
	return nil
}

// DueSplit counts the due URLs that were never fetched and those fetched before.
func (db *DB) DueSplit(ctx context.Context) (newDue, known int, err error) {
	err = db.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE date IS NULL), count(*) FILTER (WHERE date IS NOT NULL)
		FROM due d JOIN urls ON urls.id = d.id`).Scan(&newDue, &known)
	if err != nil {
		return 0, 0, fmt.Errorf("count due new and known URLs: %w", err)
	}
	return newDue, known, nil
}

// URLsPerHost counts the URLs in the table per host[:port], every state included.
func (db *DB) URLsPerHost(ctx context.Context) (map[string]int, error) {
	return db.hostCounts(ctx, "URLs per host", `SELECT host, count(*) FROM urls GROUP BY host`)
}
