package pgstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// Full-text search for strata serve, on version_text's tsvector (migration 0006). serve hands
// both backends the same store.TextMatch; tsQuery writes it as a tsquery expression built from
// PostgreSQL's own parsing of each term. The differences from SQLite's FTS5, for docs/schema.md:
//   - rank: ts_rank with the title (weight A) five times the text (weight B), negated so that
//     lower is better as with bm25, whose numbers it does not share; ties by fetch id as in SQLite;
//   - snippet: ts_headline's fragment of about 24 words around the match, where FTS5 cuts 24 tokens;
//   - diacritics are kept (see the migration): "cafe" does not find "Café".

// score is a hit's rank: ts_rank's weights are {D, C, B, A}.
const score = `(-ts_rank('{0, 0, 0.2, 1.0}', v.tsv, q.q))::double precision`

// SearchText returns up to limit versions matching q, the best first, ties by fetch id, from the
// cursor q.After; snippets are cut only for the versions it returns.
func (db *DB) SearchText(ctx context.Context, q store.TextQuery) ([]store.TextHit, error) {
	if len(q.Match.All) == 0 {
		return nil, fmt.Errorf("search the text: %w: no word to look for", store.ErrBadQuery)
	}
	op := fmt.Sprintf("search the text for %s", q.Match)
	expr, args := tsQuery(q.Match)
	where := `v.tsv @@ q.q`
	if q.After != nil {
		n := len(args)
		where += fmt.Sprintf(` AND (%s > $%d OR (%s = $%d AND v.fetch_id > $%d))`, score, n+1, score, n+1, n+2)
		args = append(args, q.After.Score, q.After.FetchID)
	}
	if len(q.Hosts) > 0 {
		where += fmt.Sprintf(` AND EXISTS (SELECT 1 FROM urls u WHERE u.id = v.url_id AND u.host = ANY($%d))`, len(args)+1)
		args = append(args, q.Hosts)
	}
	args = append(args, q.Limit)
	rows, err := db.pool.Query(ctx, `WITH q AS (SELECT `+expr+` AS q)
		SELECT v.fetch_id, `+score+` AS score FROM version_text v, q
		WHERE `+where+fmt.Sprintf(` ORDER BY score, v.fetch_id LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.TextHit, error) {
		var h store.TextHit
		return h, r.Scan(&h.FetchID, &h.Score)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if len(out) == 0 {
		return out, nil
	}
	at := map[int64]int{}
	ids := make([]int64, len(out))
	for i, h := range out {
		at[h.FetchID], ids[i] = i, h.FetchID
	}
	_, args = tsQuery(q.Match)
	headline := fmt.Sprintf(`ts_headline('simple', v.text, q.q, 'StartSel="%s", StopSel="%s", MaxWords=24, MinWords=12, ShortWord=0, MaxFragments=1, FragmentDelimiter=…')`,
		store.SnippetOpen, store.SnippetClose)
	rows, err = db.pool.Query(ctx, `WITH q AS (SELECT `+expr+` AS q)
		SELECT v.fetch_id, u.id, u.url, v.title, u.state, coalesce(f.run_id, 0), f.fetched_at,
		NOT EXISTS (SELECT 1 FROM fetches n WHERE n.url_id = u.id AND n.id > v.fetch_id AND n.archive_path IS NOT NULL),
		`+headline+`
		FROM version_text v JOIN urls u ON u.id = v.url_id JOIN fetches f ON f.id = v.fetch_id, q
		WHERE v.fetch_id = ANY($`+strconv.Itoa(len(args)+1)+`)`, append(args, ids)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var h store.TextHit
		var when *string
		if err := rows.Scan(&h.FetchID, &h.URLID, &h.URL, &h.Title, &h.State, &h.RunID, &when, &h.Current, &h.Snippet); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		h.FetchedAt = parseTime(when)
		i := at[h.FetchID]
		h.Score = out[i].Score
		out[i] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// IndexCoverage says how much of the archive the full-text index covers: upto is the fetch id
// before the first stored version that its mark (its archive root's, or a single process's) has
// not reached, newest the newest stored fetch id; upto < newest when part is not indexed yet.
func (db *DB) IndexCoverage(ctx context.Context) (upto, newest int64, err error) {
	err = db.pool.QueryRow(ctx, `WITH n AS (SELECT coalesce(max(id), 0) AS newest FROM fetches WHERE archive_path IS NOT NULL)
		SELECT coalesce((SELECT min(f.id) - 1 FROM fetches f LEFT JOIN fleet_versions v ON v.fetch_id = f.id
			LEFT JOIN fleet_workers w ON w.run_id = f.run_id AND w.worker = v.worker
			LEFT JOIN fleet_text_marks m ON m.archive_root = w.archive_root
			WHERE f.archive_path IS NOT NULL AND f.pruned_at IS NULL
			AND f.id > CASE WHEN v.worker IS NULL THEN (SELECT fetch_upto FROM text_index WHERE one = 1)
				ELSE coalesce(m.fetch_upto, 0) END), n.newest), n.newest FROM n`).Scan(&upto, &newest)
	if err != nil {
		return 0, 0, fmt.Errorf("text index coverage: %w", err)
	}
	return upto, newest, nil
}

// tsQuery writes m as a tsquery expression and its arguments: each term is phraseto_tsquery of
// its text (PostgreSQL's parser splits it as it split the indexed text), a prefix term to_tsquery
// of its one word with :*; a group's terms are joined by || and the groups by &&, and each Not
// term is joined by && !!.
func tsQuery(m store.TextMatch) (string, []any) {
	var args []any
	term := func(t store.SearchTerm) string {
		if t.Prefix {
			// The word as one tsquery lexeme, quoted: its own punctuation cannot be an operator.
			word := strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(strings.ToLower(t.Text))
			args = append(args, "'"+word+"':*")
			return fmt.Sprintf("to_tsquery('simple', $%d)", len(args))
		}
		args = append(args, t.Text)
		return fmt.Sprintf("phraseto_tsquery('simple', $%d)", len(args))
	}
	var all []string
	for _, group := range m.All {
		var either []string
		for _, t := range group {
			either = append(either, term(t))
		}
		all = append(all, "("+strings.Join(either, " || ")+")")
	}
	expr := strings.Join(all, " && ")
	for _, t := range m.Not {
		expr += " && !!" + term(t)
	}
	return expr, args
}
