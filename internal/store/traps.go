package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"time"
)

// TrapEvent is one trap defence that fired.
type TrapEvent struct {
	RunID   int64
	At      time.Time
	Domain  string
	Kind    string // max_new_per_domain, max_urls_per_domain, pattern, duplicates
	Pattern string
	Detail  string
}

// RecordTrap stores a trap event.
func (db *DB) RecordTrap(ctx context.Context, e TrapEvent) error {
	_, err := db.sql.ExecContext(ctx, `INSERT INTO trap_events (run_id, at, domain, kind, pattern, detail) VALUES (?, ?, ?, ?, ?, ?)`,
		nullInt(e.RunID), formatTime(e.At), e.Domain, e.Kind, e.Pattern, e.Detail)
	if err != nil {
		return fmt.Errorf("record trap event for %s: %w", e.Domain, err)
	}
	return nil
}

// TrapEvents returns the trap events of the last runs runs, newest first.
func (db *DB) TrapEvents(ctx context.Context, runs int) ([]TrapEvent, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT coalesce(run_id, 0), at, domain, kind, pattern, detail FROM trap_events
		WHERE run_id IS NULL OR run_id > coalesce((SELECT max(id) FROM runs), 0) - ? ORDER BY id DESC`, runs)
	if err != nil {
		return nil, fmt.Errorf("trap events: %w", err)
	}
	defer rows.Close()
	var out []TrapEvent
	for rows.Next() {
		var e TrapEvent
		var at sql.NullString
		if err := rows.Scan(&e.RunID, &at, &e.Domain, &e.Kind, &e.Pattern, &e.Detail); err != nil {
			return nil, fmt.Errorf("trap events: %w", err)
		}
		e.At = parseTime(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// URLsPerHost counts the URLs in the table per host[:port], every state included.
func (db *DB) URLsPerHost(ctx context.Context) (map[string]int, error) {
	return db.hostCounts(ctx, "URLs per host", `SELECT host, count(*) FROM urls GROUP BY host`)
}

// URLRow is one URL for the trap report.
type URLRow struct {
	URL         string
	Host        string
	ContentHash string
	Added       time.Time
}

// EachURL calls fn for every URL in the table, streaming.
func (db *DB) EachURL(ctx context.Context, fn func(URLRow) error) error {
	rows, err := db.sql.QueryContext(ctx, `SELECT url, host, coalesce(content_hash, ''), added_at FROM urls`)
	if err != nil {
		return fmt.Errorf("list URLs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r URLRow
		var added sql.NullString
		if err := rows.Scan(&r.URL, &r.Host, &r.ContentHash, &added); err != nil {
			return fmt.Errorf("list URLs: %w", err)
		}
		r.Added = parseTime(added)
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// TrapRule is what the trap defences learnt about one unit of URLs of a domain (package traps),
// kept from run to run, and whether it throttles the unit now.
type TrapRule struct {
	ID        int64
	Domain    string
	Unit      string
	Throttled bool
	Reason    string // "duplicates" or "pattern" while throttled
	// The evidence: pages fetched for the first time and, of them, near-duplicates; URLs that
	// joined and, of them, found on the unit's own pages; the levels they joined at.
	Judged, Dups, Found, SelfFound int
	MinLevel, MaxLevel             int
	Norms                          []uint64 // the last distinct texts' hashes
	// Streak counts probes in a row with new text; Probes is how many URLs one probe releases, and
	// ProbeEvery the runs between two probes.
	Streak, Probes, ProbeEvery  int
	FirstRun, LastRun, SinceRun int64
	// Held counts the URLs the rule holds and Released those of them out as a probe now (filled by
	// TrapRules; ignored by SaveTrapRule).
	Held, Released int
}

const trapRuleColumns = `id, domain, unit, state = 'throttled', reason, judged, dups, found, self_found, min_level, max_level, norms,
	streak, probes, probe_every, first_run, last_run, since_run`

// TrapRules returns every trap rule with its held URLs counted, throttled ones first.
func (db *DB) TrapRules(ctx context.Context) ([]TrapRule, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+trapRuleColumns+`,
		(SELECT count(*) FROM trap_holds h WHERE h.rule_id = r.id),
		(SELECT count(*) FROM trap_holds h WHERE h.rule_id = r.id AND h.released > 0)
		FROM trap_rules r ORDER BY state = 'throttled' DESC, domain, unit`)
	if err != nil {
		return nil, fmt.Errorf("trap rules: %w", err)
	}
	defer rows.Close()
	var out []TrapRule
	for rows.Next() {
		var r TrapRule
		var norms []byte
		if err := rows.Scan(&r.ID, &r.Domain, &r.Unit, &r.Throttled, &r.Reason, &r.Judged, &r.Dups, &r.Found, &r.SelfFound,
			&r.MinLevel, &r.MaxLevel, &norms, &r.Streak, &r.Probes, &r.ProbeEvery, &r.FirstRun, &r.LastRun, &r.SinceRun,
			&r.Held, &r.Released); err != nil {
			return nil, fmt.Errorf("trap rules: %w", err)
		}
		for i := 0; i+8 <= len(norms); i += 8 {
			r.Norms = append(r.Norms, binary.LittleEndian.Uint64(norms[i:]))
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("trap rules: %w", err)
	}
	return out, nil
}

// SaveTrapRule stores a rule, by its domain and unit, and returns its id.
func (db *DB) SaveTrapRule(ctx context.Context, r TrapRule) (int64, error) {
	var id int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		id, err = saveTrapRule(ctx, tx, r)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("save the trap rule of %s: %w", r.Unit, err)
	}
	return id, nil
}

// SaveTrapRules stores rules in one transaction, deletes the rules with ids drop (releasing what
// they hold), and forgets the rules whose last evidence is older than run forgetBefore and that
// hold no URL: a trap that is gone costs little to relearn, and the table stays as small as what
// the defences suspect.
func (db *DB) SaveTrapRules(ctx context.Context, rules []TrapRule, drop []int64, forgetBefore int64) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for _, r := range rules {
			if _, err := saveTrapRule(ctx, tx, r); err != nil {
				return fmt.Errorf("%s: %w", r.Unit, err)
			}
		}
		for _, id := range drop {
			if _, err := tx.ExecContext(ctx, `DELETE FROM trap_rules WHERE id = ?`, id); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM trap_rules WHERE last_run < ?
			AND NOT EXISTS (SELECT 1 FROM trap_holds h WHERE h.rule_id = trap_rules.id)`, forgetBefore)
		return err
	})
	if err != nil {
		return fmt.Errorf("save %d trap rules: %w", len(rules), err)
	}
	return nil
}

func saveTrapRule(ctx context.Context, tx *sql.Tx, r TrapRule) (int64, error) {
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
	err := tx.QueryRowContext(ctx, `INSERT INTO trap_rules (domain, unit, state, reason, judged, dups, found, self_found,
		min_level, max_level, norms, streak, probes, probe_every, first_run, last_run, since_run)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
		ON CONFLICT (domain, unit) DO UPDATE SET state = ?3, reason = ?4, judged = ?5, dups = ?6, found = ?7,
		self_found = ?8, min_level = ?9, max_level = ?10, norms = ?11, streak = ?12, probes = ?13, probe_every = ?14,
		last_run = ?16, since_run = ?17
		RETURNING id`, r.Domain, r.Unit, state, r.Reason, r.Judged, r.Dups, r.Found, r.SelfFound, r.MinLevel, r.MaxLevel,
		norms, r.Streak, max(r.Probes, 1), max(r.ProbeEvery, 1), r.FirstRun, r.LastRun, r.SinceRun).Scan(&id)
	return id, err
}

// HoldURLs puts under rule every active URL that is not a seed and not held yet, whose address
// starts with one of prefixes and that match accepts: known pages and never-fetched ones alike, due
// or not. A held URL stays in the table but is not due until a probe or the rule's end releases it.
// It returns how many it held, and how many of those were due.
func (db *DB) HoldURLs(ctx context.Context, rule int64, prefixes []string, match func(pageURL string) bool) (held, wasDue int, err error) {
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		held, wasDue = 0, 0
		type cand struct {
			id  int64
			due bool
		}
		var cands []cand
		for _, p := range prefixes {
			end, ok := prefixEnd(p)
			if !ok {
				end = p + "\xff" // p is all 0xff bytes: no URL is
			}
			rows, err := tx.QueryContext(ctx, `SELECT id, url, due_tick <= `+tickNow+` FROM urls
				WHERE url >= ? AND url < ? AND state = 'active' AND is_seed = 0
				AND NOT EXISTS (SELECT 1 FROM trap_holds h WHERE h.url_id = urls.id)`, p, end)
			if err != nil {
				return err
			}
			for rows.Next() {
				var c cand
				var u string
				if err := rows.Scan(&c.id, &u, &c.due); err != nil {
					rows.Close()
					return err
				}
				if match(u) {
					cands = append(cands, c)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		for _, c := range cands {
			if _, err := tx.ExecContext(ctx, `INSERT INTO trap_holds (url_id, rule_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, c.id, rule); err != nil {
				return err
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

// ReleaseTrapRule lets go of every URL rule holds: those due now join the due set. It returns the
// hosts of the URLs released, and how many of them are due.
func (db *DB) ReleaseTrapRule(ctx context.Context, rule int64) (hosts []string, due int, err error) {
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		hosts = nil
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM urls WHERE id IN (SELECT url_id FROM trap_holds WHERE rule_id = ? AND released = 0)
			AND state = 'active' AND due_tick <= `+tickNow, rule).Scan(&due); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT host FROM urls WHERE id IN (SELECT url_id FROM trap_holds WHERE rule_id = ?)`, rule)
		if err != nil {
			return err
		}
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				rows.Close()
				return err
			}
			hosts = append(hosts, h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM trap_holds WHERE rule_id = ?`, rule)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("release the URLs of trap rule %d: %w", rule, err)
	}
	return hosts, due, nil
}

// ForgetTrapRules deletes the trap rules of a domain, or the one of a unit, releasing every URL
// they hold: the operator's way to clear what the defences learnt. It returns how many rules and
// held URLs it let go.
func (db *DB) ForgetTrapRules(ctx context.Context, domainOrUnit string) (rules, released int, err error) {
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		const which = `(SELECT id FROM trap_rules WHERE domain = ?1 OR unit = ?1)`
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM trap_holds WHERE rule_id IN `+which, domainOrUnit).Scan(&released); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM trap_rules WHERE id IN `+which, domainOrUnit)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		rules = int(n)
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("forget the trap rules of %s: %w", domainOrUnit, err)
	}
	return rules, released, nil
}

// HeldURLs returns the URLs trap rules hold now (not out as a probe), each with its rule's unit.
func (db *DB) HeldURLs(ctx context.Context) (map[string]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT u.url, r.unit FROM trap_holds h JOIN urls u ON u.id = h.url_id
		JOIN trap_rules r ON r.id = h.rule_id WHERE h.released = 0`)
	if err != nil {
		return nil, fmt.Errorf("held URLs: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var u, unit string
		if err := rows.Scan(&u, &unit); err != nil {
			return nil, fmt.Errorf("held URLs: %w", err)
		}
		out[u] = unit
	}
	return out, rows.Err()
}
