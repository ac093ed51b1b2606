-- The archive in web archiving's own formats (issue 20): the head of every HTTP exchange, kept
-- beside its fetch, so that a fetch can be written as WARC after the fact without invented headers.

-- One row per fetch that got a response, from this version on. request is the request as sent
-- (request line and header fields, as net/http wrote them); response the status line and header
-- fields as received (sorted by name: net/http does not keep their order). ip is the address the
-- request went to. payload_digest is the WARC-Payload-Digest ("sha1:" and base32) of the body as
-- strata keeps it (decoded, at most crawl.max_bytes). warc_id is the WARC-Record-ID of the fetch's
-- response or revisit record (warc_type) in its run's WARC files, NULL when none was written
-- (warc.enabled off, or a write that failed); a revisit refers to the latest 'response' of its URL.
CREATE TABLE captures (
    fetch_id       INTEGER PRIMARY KEY REFERENCES fetches (id) ON DELETE CASCADE,
    request        BLOB,
    response       BLOB,
    ip             TEXT,
    payload_digest TEXT,
    warc_id        TEXT,
    warc_type      TEXT CHECK (warc_type IN ('response', 'revisit'))
);

-- The head of the last robots.txt exchange of each origin, beside its body.
ALTER TABLE hosts ADD COLUMN robots_request BLOB;
ALTER TABLE hosts ADD COLUMN robots_response BLOB;
