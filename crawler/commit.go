package crawler

import (
	"context"
	"log/slog"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/crashpoint"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/warc"
)

// FetchRecorder stores fetch outcomes; it is all the committer needs.
type FetchRecorder interface {
	// RecordFetches stores many fetches in one transaction (none if one fails), RecordFetch one.
	RecordFetches(ctx context.Context, recs []store.FetchRecord) error
	RecordFetch(ctx context.Context, r store.FetchRecord) error
}

// Recorder is what the crawl stage records its outcomes with: the fetches, through the committer,
// and the states of URLs never fetched (filtered, blocked, active again).
type Recorder interface {
	FetchRecorder
	// RecentStatuses returns the HTTP statuses of a URL's last n fetches, the newest first.
	RecentStatuses(ctx context.Context, urlID int64, n int) ([]int, error)
	// SetState sets a URL's state ("active", "blocked", "filtered", …), which takes it out of the
	// due set unless it is "active".
	SetState(ctx context.Context, urlID int64, state string) error
}

var _ Recorder = (*store.DB)(nil)

// maxCommitBatch bounds how many pages one commit takes: small enough that one transaction stays
// short.
const maxCommitBatch = 256

// committer makes the crawled pages of all workers durable together (group commit). A page on its
// own cost several fsyncs for its archive files and a SQLite transaction for its row, taken by 32
// workers in turn: they spent most of their time waiting for the disk and for each other. The
// committer takes whatever pages are waiting, puts their versions in place with one set of syncs,
// then records their rows in one transaction — a row still never points at a version that is not
// durable. A page's domain stays busy until its commit is done, so the next due URL the domain
// asks the store for is never the one just crawled.
type committer struct {
	arch     Archive      // nil: nothing is archived
	warc     *warc.Writer // nil: no WARC is written
	runStart time.Time    // names the run's archive directory
	store    FetchRecorder
	log      *slog.Logger
	jobs     chan *commitJob
	done     chan struct{}
}

// commitJob is one page waiting for the committer.
type commitJob struct {
	rec     *store.FetchRecord
	version *archive.Version // the page's new version, nil if none
	warc    *warc.Encoded    // the page's WARC records, encoded; nil if none
	archErr error            // set when the version could not be stored
	result  chan error
}

// newCommitter starts a committer whose queue holds up to queue pages; a page beyond that waits in
// its worker. Each page waiting holds its body and text, so the queue is what bounds the memory of
// pages between fetch and record: about one page per worker in the queue, one per worker in the
// batch being committed, and one in each worker.
func newCommitter(ctx context.Context, arch Archive, runStart time.Time, st FetchRecorder, log *slog.Logger, queue int) *committer {
	c := &committer{arch: arch, runStart: runStart, store: st, log: log, jobs: make(chan *commitJob, queue), done: make(chan struct{})}
	go c.run(context.WithoutCancel(ctx)) // a page handed over is recorded, even when the stage stops
	return c
}

// close waits for the committer to finish, then closes the run's WARC file; no record may be
// submitted after it.
func (c *committer) close() {
	close(c.jobs)
	<-c.done
	if c.warc != nil {
		if err := c.warc.Close(); err != nil {
			c.log.Error("WARC: the run's last file could not be closed; the seal makes it whole", "error", err)
		}
	}
}

// submit hands rec (and its page's new version v, if any) to the committer without waiting; it
// blocks only while the queue is full. Neither may be touched until wait
// returns.
func (c *committer) submit(rec *store.FetchRecord, v *archive.Version, warcRecords *warc.Encoded) *commitJob {
	j := &commitJob{rec: rec, version: v, warc: warcRecords, result: make(chan error, 1)}
	c.jobs <- j
	return j
}

// wait waits for a submitted page to be recorded. archErr reports a version that could not be
// stored: the record was then stored without it (its error noted, its content hash and digest
// left as they were and its validators dropped, so the next crawl fetches the page in full and
// archives the change). err is the store's.
func (j *commitJob) wait() (archErr, err error) {
	err = <-j.result
	return j.archErr, err
}

func (c *committer) run(ctx context.Context) {
	defer close(c.done)
	for j := range c.jobs {
		batch := []*commitJob{j}
	more:
		for len(batch) < maxCommitBatch {
			select {
			case j, ok := <-c.jobs:
				if !ok {
					break more
				}
				batch = append(batch, j)
			default:
				break more
			}
		}
		c.commit(ctx, batch)
	}
}

// commit writes a batch's versions and puts them in place, then records its rows. The versions'
// files are written here, one after another, rather than by the workers: 32 goroutines creating
// files at once cost the kernel 2.7 times the system time per file that one does (measured on
// ext4: 250 µs against 93 µs per version directory of three files), contending for its locks.
func (c *committer) commit(ctx context.Context, batch []*commitJob) {
	failed := func(j *commitJob, err error) {
		j.archErr = err
		j.rec.Error = joinErr(j.rec.Error, err.Error())
		// The stored version, hash and digest stay those of the last version archived, so the
		// next crawl compares against them and archives this change then. The response's
		// validators describe the version that was lost: kept, they would turn the next crawl
		// into a 304 and the change would never be archived. Without them the next request is
		// unconditional.
		j.rec.ContentHash, j.rec.Digest, j.rec.Changed, j.rec.ArchivePath = "", nil, false, ""
		j.rec.ETag, j.rec.LastModified = "", ""
	}
	c.writeWARC(batch)
	var versions []*archive.Pending
	var owners []*commitJob
	for _, j := range batch {
		if j.version == nil {
			continue
		}
		p, err := c.arch.Stage(c.runStart, *j.version)
		if err != nil {
			failed(j, err)
			continue
		}
		j.rec.ArchivePath = p.Path()
		versions = append(versions, p)
		owners = append(owners, j)
	}
	if len(versions) > 0 {
		crashpoint.Hit("staged") // temporary files in the run's directory
		for i, err := range c.arch.Commit(versions) {
			if err != nil {
				failed(owners[i], err)
			}
		}
		crashpoint.Hit("archived") // versions in place that no fetch records
	}
	recs := make([]store.FetchRecord, len(batch))
	for i, j := range batch {
		recs[i] = *j.rec
	}
	if err := c.store.RecordFetches(ctx, recs); err != nil {
		// One bad record must not fail the others: record each on its own to find it.
		c.log.Debug("group commit failed; recording its pages one by one", "pages", len(batch), "error", err)
		for _, j := range batch {
			j.result <- c.store.RecordFetch(ctx, *j.rec)
		}
		return
	}
	for _, j := range batch {
		j.result <- nil
	}
}

// writeWARC appends the batch's WARC records and makes them durable before anything of the batch
// is recorded, so that no fetch row names a WARC record a crash could lose. Records whose write
// failed are not named: the fetch is recorded without its WARC record, and a later revisit refers
// to an earlier response instead.
func (c *committer) writeWARC(batch []*commitJob) {
	if c.warc == nil {
		return
	}
	var err error
	wrote := false
	for _, j := range batch {
		if j.warc == nil {
			continue
		}
		if err == nil {
			_, err = c.warc.AppendPage(*j.warc)
			wrote = true
		}
		if err != nil && j.rec.Capture != nil {
			j.rec.Capture.WARCID, j.rec.Capture.WARCType = "", ""
		}
	}
	if err == nil && wrote {
		if err = c.warc.Sync(); err != nil {
			for _, j := range batch {
				if j.rec.Capture != nil {
					j.rec.Capture.WARCID, j.rec.Capture.WARCType = "", ""
				}
			}
		}
	}
	if err != nil {
		c.log.Error("WARC: the records of a batch of pages could not be written; the pages are recorded without them", "pages", len(batch), "error", err)
		return
	}
	if wrote {
		crashpoint.Hit("warc-synced") // WARC records durable that no fetch row names yet
	}
}
