package pgstore

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// RecordTrap stores a trap event.
func (db *DB) RecordTrap(ctx context.Context, e store.TrapEvent) error {
	_, err := db.execRows(ctx, `INSERT INTO trap_events (run_id, at, domain, kind, pattern, detail) VALUES ($1, $2, $3, $4, $5, $6)`,
		idOrNull(e.RunID), formatTime(e.At), e.Domain, e.Kind, e.Pattern, e.Detail)
	if err != nil {
		return fmt.Errorf("record trap event for %s: %w", e.Domain, err)
	}
	return nil
}

const trapRuleColumns = `id, domain, unit, state = 'throttled', reason, judged, dups, found, self_found, min_level, max_level, norms,
	streak, probes, probe_every, first_run, last_run, since_run`

// TrapRules returns every trap rule with its held URLs counted, throttled ones first.
func (db *DB) TrapRules(ctx context.Context) ([]store.TrapRule, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+trapRuleColumns+`,
		(SELECT count(*) FROM trap_holds h WHERE h.rule_id = r.id),
		(SELECT count(*) FROM trap_holds h WHERE h.rule_id = r.id AND h.released > 0)
		FROM trap_rules r ORDER BY state = 'throttled' DESC, domain, unit`)
	if err != nil {
		return nil, fmt.Errorf("trap rules: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.TrapRule, error) {
		var r store.TrapRule
		var norms []byte
		if err := row.Scan(&r.ID, &r.Domain, &r.Unit, &r.Throttled, &r.Reason, &r.Judged, &r.Dups, &r.Found, &r.SelfFound,
			&r.MinLevel, &r.MaxLevel, &norms, &r.Streak, &r.Probes, &r.ProbeEvery, &r.FirstRun, &r.LastRun, &r.SinceRun,
			&r.Held, &r.Released); err != nil {
			return r, err
		}
		for i := 0; i+8 <= len(norms); i += 8 {
			r.Norms = append(r.Norms, binary.LittleEndian.Uint64(norms[i:]))
		}
		return r, nil
	})
	if err != nil {
		return nil, fmt.Errorf("trap rules: %w", err)
	}
	return out, nil
}

// SaveTrapRule stores a rule, by its domain and unit, and returns its id.
func (db *DB) SaveTrapRule(ctx context.Context, r store.TrapRule) (int64, error) {
	var id int64
	// One upsert, keyed by the rule's domain and unit: the crawl stores rules as it judges pages.
	err := db.rows(ctx, func(tx pgx.Tx) error {
		var err error
		id, err = saveTrapRule(ctx, tx, r)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("save the trap rule of %s: %w", r.Unit, err)
	}
	return id, nil
}

// SaveTrapRules stores rules in one transaction, deletes the rules with ids drop and forgets the
// rules with no evidence since run forgetBefore that hold no URL.
func (db *DB) SaveTrapRules(ctx context.Context, rules []store.TrapRule, drop []int64, forgetBefore int64) error {
	err := db.write(ctx, func(tx pgx.Tx) error {
		for _, r := range rules {
			if _, err := saveTrapRule(ctx, tx, r); err != nil {
				return fmt.Errorf("%s: %w", r.Unit, err)
			}
		}
		if len(drop) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM trap_rules WHERE id = ANY($1::bigint[])`, drop); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `DELETE FROM trap_rules WHERE last_run < $1
			AND NOT EXISTS (SELECT 1 FROM trap_holds h WHERE h.rule_id = trap_rules.id)`, forgetBefore)
		return err
	})
	if err != nil {
		return fmt.Errorf("save %d trap rules: %w", len(rules), err)
	}
	return nil
}

func saveTrapRule(ctx context.Context, tx pgx.Tx, r store.TrapRule) (int64, error) {
	state := "watch"
	if r.Throttled {
		state = "throttled"
	} else {
		r.Reason = ""
	}
	norms := make([]byte, 0, 8*len(r.Norms))
	for _, n := range r.Norms {
		norms = binary.LittleEndian.AppendUint64(norms, n)
	}
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO trap_rules (domain, unit, state, reason, judged, dups, found, self_found,
		min_level, max_level, norms, streak, probes, probe_every, first_run, last_run, since_run)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
		ON CONFLICT (domain, unit) DO UPDATE SET state = $3, reason = $4, judged = $5, dups = $6, found = $7,
		self_found = $8, min_level = $9, max_level = $10, norms = $11, streak = $12, probes = $13, probe_every = $14,
		last_run = $16, since_run = $17
		RETURNING id`, r.Domain, r.Unit, state, r.Reason, r.Judged, r.Dups, r.Found, r.SelfFound, r.MinLevel, r.MaxLevel,
		norms, r.Streak, max(r.Probes, 1), max(r.ProbeEvery, 1), r.FirstRun, r.LastRun, r.SinceRun).Scan(&id)
	return id, err
}

// HoldURLs puts under rule every active URL that is not a seed and not held yet, whose address
// starts with one of prefixes and that match accepts: store.DB.HoldURLs.
//
// The crawl holds a unit's URLs when it throttles the unit, alongside other pages' records: the
// candidates are locked as they are read (in id order), so that a record of one of them either
// commits first, and is seen, or waits, and its due row's trigger then sees the hold. A URL
// another page discovers meanwhile is not held, as if it had come just after; the guard holds the
// unit's later discoveries itself (store.NewURL.Hold). Only holds actually inserted are counted.
func (db *DB) HoldURLs(ctx context.Context, rule int64, prefixes []string, match func(pageURL string) bool) (held, wasDue int, err error) {
	err = db.rows(ctx, func(tx pgx.Tx) error {
		held, wasDue = 0, 0
		type cand struct {
			id  int64
			due bool
		}
		var cands []cand
		for _, p := range prefixes {
			// The range reads urls' unique index on url; a prefix with no string after it (its
			// last code point the last there is) is bounded by starts_with alone.
			bound, args := `url >= $1 AND starts_with(url, $1)`, []any{p}
			if end, ok := prefixEnd(p); ok {
				bound, args = `url >= $1 AND url < $2`, append(args, end)
			}
			rows, err := tx.Query(ctx, `SELECT id, url, due_tick <= `+tickNow+` FROM urls
				WHERE `+bound+` AND state = 'active' AND is_seed = 0
				AND NOT EXISTS (SELECT 1 FROM trap_holds h WHERE h.url_id = urls.id) ORDER BY id FOR UPDATE`, args...)
			if err != nil {
				return err
			}
			var c cand
			var u string
			if _, err := pgx.ForEachRow(rows, []any{&c.id, &u, &c.due}, func() error {
				if match(u) {
					cands = append(cands, c)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		for _, c := range cands {
			tag, err := tx.Exec(ctx, `INSERT INTO trap_holds (url_id, rule_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, c.id, rule)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				continue // held by another rule in the meantime
			}
			held++
			if c.due {
				wasDue++
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("hold the URLs of trap rule %d: %w", rule, err)
	}
	return held, wasDue, nil
}

// ReleaseTrapRule lets go of every URL rule holds and returns their hosts and how many are due.
func (db *DB) ReleaseTrapRule(ctx context.Context, rule int64) (hosts []string, due int, err error) {
	err = db.write(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM urls WHERE id IN (SELECT url_id FROM trap_holds WHERE rule_id = $1 AND released = 0)
			AND state = 'active' AND due_tick <= `+tickNow, rule).Scan(&due); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT DISTINCT host FROM urls WHERE id IN (SELECT url_id FROM trap_holds WHERE rule_id = $1)`, rule)
		if err != nil {
			return err
		}
		if hosts, err = collectStrings(rows); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM trap_holds WHERE rule_id = $1`, rule)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("release the URLs of trap rule %d: %w", rule, err)
	}
	return hosts, due, nil
}

// TrapEvents returns the trap events of the last runs runs and those of no run, newest first:
// store.DB.TrapEvents.
func (db *DB) TrapEvents(ctx context.Context, runs int) ([]store.TrapEvent, error) {
	out, err := db.trapEvents(ctx, `WHERE run_id IS NULL OR run_id > coalesce((SELECT max(id) FROM runs), 0) - $1 ORDER BY id DESC`, runs)
	if err != nil {
		return nil, fmt.Errorf("trap events: %w", err)
	}
	return out, nil
}

// trapEvents lists the trap events that where, the rest of the query after its FROM, selects.
func (db *DB) trapEvents(ctx context.Context, where string, args ...any) ([]store.TrapEvent, error) {
	rows, err := db.pool.Query(ctx, `SELECT coalesce(run_id, 0), at, domain, kind, pattern, detail FROM trap_events `+where, args...)
	if err != nil {
		return nil, err
	}
	var out []store.TrapEvent
	var e store.TrapEvent
	var at *string
	_, err = pgx.ForEachRow(rows, []any{&e.RunID, &at, &e.Domain, &e.Kind, &e.Pattern, &e.Detail}, func() error {
		e.At = parseTime(at)
		out = append(out, e)
		return nil
	})
	return out, err
}

// EachURL calls fn for every URL in the table, streaming: store.DB.EachURL. fn's error stops the
// walk and is returned as it is.
func (db *DB) EachURL(ctx context.Context, fn func(store.URLRow) error) error {
	rows, err := db.pool.Query(ctx, `SELECT url, host, coalesce(content_hash, ''), added_at FROM urls`)
	if err != nil {
		return fmt.Errorf("list URLs: %w", err)
	}
	var r store.URLRow
	var added *string
	return forEachRow(rows, []any{&r.URL, &r.Host, &r.ContentHash, &added}, "list URLs", func() error {
		r.Added = parseTime(added)
		return fn(r)
	})
}

// ForgetTrapRules deletes the trap rules of a domain, or the one of a unit, releasing every URL
// they hold (the holds go with their rule, and the due table's trigger makes the due ones due
// again): store.DB.ForgetTrapRules.
func (db *DB) ForgetTrapRules(ctx context.Context, domainOrUnit string) (rules, released int, err error) {
	err = db.write(ctx, func(tx pgx.Tx) error {
		const which = `(SELECT id FROM trap_rules WHERE domain = $1 OR unit = $1)`
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM trap_holds WHERE rule_id IN `+which, domainOrUnit).Scan(&released); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM trap_rules WHERE id IN `+which, domainOrUnit)
		rules = int(tag.RowsAffected())
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("forget the trap rules of %s: %w", domainOrUnit, err)
	}
	return rules, released, nil
}
