package runcycle

import (
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"slices"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/crashpoint"
	"github.com/strata-crawler/strata/internal/store"
)

// Recover makes whole what earlier sessions left behind, before this one writes anything: a run a
// killed process left open is marked interrupted (and returned, so that the next crawl knows it
// follows a crash), the files of versions a killed prune had marked pruned are removed, and every
// run that ended without its archive directory sealed — killed, or its manifest refused by a full
// disk, or from before schema version 14 — is sealed now.
func Recover(ctx context.Context, db Store, arch *archive.Dir, log *slog.Logger) (crashed []store.Run, err error) {
	if crashed, err = db.CloseStaleRuns(ctx); err != nil {
		return nil, err
	}
	for _, r := range crashed {
		log.Warn("an earlier run was cut off (killed or crashed); marked interrupted, its unreached URLs are due", "run", r.ID)
	}
	return crashed, repair(ctx, db, arch, log)
}

// repair removes what a killed prune left and seals every run not sealed.
func repair(ctx context.Context, db Store, arch *archive.Dir, log *slog.Logger) error {
	if err := FinishPrunes(ctx, db, arch, log); err != nil {
		return err
	}
	runs, err := db.UnsealedRuns(ctx)
	if err != nil {
		return err
	}
	orphans := 0
	for _, r := range runs {
		removed, err := Seal(ctx, db, arch, r.ID, r.StartedAt)
		if err != nil {
			return err
		}
		if removed > 0 {
			log.Warn("removed versions an earlier run left unrecorded or incomplete", "run", r.ID, "versions", removed)
		}
		orphans += removed
	}
	if len(runs) > 0 {
		log.Info("sealed the archive directories of earlier runs: orphans removed, manifests written",
			"runs", len(runs), "first", runs[0].ID, "last", runs[len(runs)-1].ID, "versions_removed", orphans)
	}
	return nil
}

// Seal makes the archive directory of run final: it removes temporary files and every version no
// fetch of the run records (the remains of a kill, or of a write or commit that failed), makes its
// WARC files whole and indexes them, writes manifest.jsonl from the run's fetches, then records
// the seal. It is idempotent, so a seal cut off
// is simply done again by the next session. It returns how many versions it removed.
func Seal(ctx context.Context, db Store, arch *archive.Dir, run int64, start time.Time) (int, error) {
	// What the directory may hold, as 8-byte hashes of the version paths, sorted: a run that
	// snapshots a million pages costs 8 MB here, not the paths. A collision would keep an orphan,
	// never remove a version.
	seed := maphash.MakeSeed()
	var known []uint64
	err := db.RunFiles(ctx, run, func(version, unchanged string) {
		if version == "" {
			var err error
			if version, err = archive.VersionPath(start, unchanged); err != nil {
				return
			}
		}
		known = append(known, maphash.String(seed, version))
	})
	if err != nil {
		return 0, err
	}
	slices.Sort(known)
	removed, err := arch.Repair(start, func(rel string) bool {
		_, ok := slices.BinarySearch(known, maphash.String(seed, rel))
		return ok
	})
	if err != nil {
		return removed, err
	}
	if err := sealWARC(arch, start); err != nil {
		return removed, err
	}
	if err := writeManifest(ctx, db, arch, run, start); err != nil {
		return removed, err
	}
	crashpoint.Hit("manifest-written")
	return removed, db.SealRun(ctx, run, time.Now())
}

// FinishPrunes removes the files of the versions a killed prune had marked pruned but not yet
// removed, and closes their journal entries. A version whose files cannot be removed stays in the
// journal, to be tried again by the next session, and does not stop this one: it is marked pruned
// already, so nothing is lost, only space.
func FinishPrunes(ctx context.Context, db Store, arch *archive.Dir, log *slog.Logger) error {
	paths, err := db.PendingPrunes(ctx)
	if err != nil || len(paths) == 0 {
		return err
	}
	done := paths[:0:0]
	var failed error
	for _, p := range paths {
		if err := arch.Remove(p); err != nil {
			failed = err
			continue
		}
		done = append(done, p)
	}
	if err := db.Pruned(ctx, done); err != nil {
		return err
	}
	if len(done) > 0 {
		log.Warn("an earlier prune was cut off; the files of the versions it had marked pruned are removed now", "versions", len(done))
	}
	if failed != nil {
		log.Warn("the files of versions marked pruned could not be removed; the next session tries again",
			"versions", len(paths)-len(done), "error", failed)
	}
	return nil
}

// writeManifest writes the run directory's manifest.jsonl from the run's fetches. A run that
// fetched nothing gets none, nor a directory for it.
func writeManifest(ctx context.Context, db Store, arch *archive.Dir, runID int64, start time.Time) error {
	errSome := errors.New("the run fetched a page")
	switch err := db.RunManifest(ctx, runID, func(store.ManifestEntry) error { return errSome }); {
	case err == nil:
		return nil
	case !errors.Is(err, errSome):
		return err
	}
	return arch.WriteManifest(start, func(add func(archive.ManifestEntry) error) error {
		return db.RunManifest(ctx, runID, func(e store.ManifestEntry) error {
			return add(archive.ManifestEntry{URL: e.URL, Outcome: e.Outcome, Path: e.Current})
		})
	})
}
