-- A run's page budget (optimizer.budget) is the run's, not each worker's (issue 22): the fleet's
-- workers reserve their page fetches here. No SQLite counterpart: one process keeps the account in
-- memory.

-- fleet_budgets holds one row per budgeted run of a fleet: total is the run's cap, new_cap how many
-- of it never-fetched URLs may take before known ones are served, both as the first worker of the
-- run set them. new_taken and known_taken count the fetches reserved so far, by the kind of URL
-- that asked; a worker reserves a small block at a time and gives back what it did not use when
-- its crawl stage ends, so a killed worker's unused block stays counted.
CREATE TABLE fleet_budgets (
    run_id      bigint PRIMARY KEY REFERENCES runs (id),
    total       bigint NOT NULL,
    new_cap     bigint NOT NULL,
    new_taken   bigint NOT NULL DEFAULT 0,
    known_taken bigint NOT NULL DEFAULT 0,
    CHECK (new_taken >= 0 AND known_taken >= 0 AND new_taken + known_taken <= total)
);
