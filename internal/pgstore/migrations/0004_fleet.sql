-- Workers on many machines share one frontier (issue 22, item 3). These tables have no SQLite
-- counterpart: a SQLite database has one process, which its run lock file guarantees.

-- fleet_leases holds one row per politeness domain (polite.Gate.Key) a worker has ever leased. A
-- domain is worked by the worker named in worker until expires_at; NULL worker: nobody. The gate's
-- state lives here too, so that the per-domain gap and Crawl-delay hold across the fleet: next_at
-- is the earliest start of the domain's next request, last_end_at the end of its last response.
-- Times are the workers' clocks (keep the machines on NTP).
CREATE TABLE fleet_leases (
    domain         text COLLATE "C" PRIMARY KEY,
    host           text COLLATE "C" NOT NULL DEFAULT '',
    worker         text,
    expires_at     timestamptz,
    last_end_at    timestamptz,
    next_at        timestamptz,
    crawl_delay_ms bigint NOT NULL DEFAULT 0,
    requests       bigint NOT NULL DEFAULT 0
);
CREATE INDEX fleet_leases_worker ON fleet_leases (worker) WHERE worker IS NOT NULL;

-- fleet_workers lists the workers of each run: a worker joins the run that is running, renews
-- heartbeat_at while it works and sets done_at when its crawl stage ends. A run's crawl stage has
-- finished fleet-wide when every worker is done or silent for longer than a lease.
CREATE TABLE fleet_workers (
    run_id       bigint NOT NULL REFERENCES runs (id),
    worker       text COLLATE "C" NOT NULL,
    archive_root text NOT NULL DEFAULT '',
    joined_at    timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL,
    done_at      timestamptz,
    PRIMARY KEY (run_id, worker)
);

-- fleet_versions says which worker recorded each archived version, so that its archive root
-- (fleet_workers.archive_root of the fetch's run) is known on every machine.
CREATE TABLE fleet_versions (
    fetch_id bigint PRIMARY KEY REFERENCES fetches (id) ON DELETE CASCADE,
    worker   text COLLATE "C" NOT NULL
);
