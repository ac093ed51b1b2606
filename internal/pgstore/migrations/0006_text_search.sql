-- The index step on PostgreSQL (issue 22): the full text of every stored version, for strata
-- serve's search. SQLite keeps it in an FTS5 virtual table (version_text, SQLite 0014); here it is
-- a plain table of the same name and content, whose tsvector column, generated from the title and
-- the text, a GIN index covers. The 'simple' configuration lower-cases words and does nothing more:
-- no stemming, no stop words, which is what SQLite's unicode61 tokenizer does too, whatever the
-- language of the page (a crawl mixes languages, and a stemmer of the wrong one mangles words).
-- Unlike SQLite's it keeps diacritics: "cafe" does not find "Café" (unaccent is an extension that
-- needs a superuser to install). The title weighs A and the text B, so that ranking can weigh a
-- title match more, as SQLite's bm25(version_text, 5.0, 1.0) does.
CREATE TABLE version_text (
    fetch_id bigint PRIMARY KEY,
    url_id   bigint NOT NULL,
    title    text NOT NULL,
    text     text NOT NULL,
    tsv      tsvector GENERATED ALWAYS AS (setweight(to_tsvector('simple', title), 'A')
                                           || setweight(to_tsvector('simple', text), 'B')) STORED
);
CREATE INDEX version_text_tsv ON version_text USING gin (tsv);

-- fleet_text_marks is how far the index step has gone on each fleet archive root: a worker can
-- read only its own root, so it indexes the versions archived there (fleet_versions.worker, whose
-- fleet_workers.archive_root of the fetch's run is the root) with the root's mark. A worker's name
-- changes with each process, its root does not, so a worker killed before it indexed leaves its
-- versions to the next worker on the same root. text_index.fetch_upto stays the mark of a single
-- process (no --worker), which indexes the versions no fleet worker archived, and text_index.run_upto
-- the one mark of the runs' page events, which the worker that wins a run's election records.
CREATE TABLE fleet_text_marks (
    archive_root text COLLATE "C" PRIMARY KEY,
    fetch_upto   bigint NOT NULL
);
