-- strata_phase(run, url, fr_max): frequency.Phase of the URL's frequency.PageKey, which the SQLite
-- store registers as a Go function (internal/store/store.go) and ApplyPlan calls to put each page on
-- its phase of the optimal plan. TestPhaseMatchesGo compares the two on many inputs.

-- strata_page_key is frequency.PageKey: 64-bit FNV-1a of the URL's UTF-8 bytes, shifted right by 2
-- to keep it positive. bigint arithmetic cannot wrap (an overflow is an error), so the hash is kept
-- in two 32-bit halves and multiplied by the FNV prime 0x100000001b3 = 256·2^32 + 435 half by half:
-- no partial product reaches 2^42.
CREATE FUNCTION strata_page_key(u text) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    b  bytea  := convert_to(u, 'UTF8');
    hi bigint := 3421674724; -- 0xcbf29ce4, the offset basis's high half
    lo bigint := 2216829733; -- 0x84222325, its low half
    p  bigint;
BEGIN
    FOR i IN 0 .. length(b) - 1 LOOP
        lo := lo # get_byte(b, i);
        p := lo * 435;
        hi := (hi * 435 + lo * 256 + (p >> 32)) & 4294967295;
        lo := p & 4294967295;
    END LOOP;
    RETURN (hi << 30) | (lo >> 2);
END $$;

-- strata_phase is frequency.Phase(run, strata_page_key(u), fr_max): the runs, in [⌈f/2⌉, f + ⌈f/2⌉),
-- until the page's turn. % truncates toward zero in PostgreSQL as in Go, and / is integer division.
CREATE FUNCTION strata_phase(run bigint, u text, fr_max bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN k < (f + 1) / 2 THEN k + f ELSE k END
    FROM (SELECT f, CASE WHEN m = 0 THEN f ELSE m END AS k
          FROM (SELECT f, ((f - (run + strata_page_key(u)) % f) % f + f) % f AS m
                FROM (SELECT greatest(fr_max, 1) AS f) a) b) c
$$;
