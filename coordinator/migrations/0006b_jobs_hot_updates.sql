-- Job updates without index changes (docs/store.md, "Job updates"). A job row is updated
-- twice on its way: at assignment (queued -> running: epoch, attempts, worker, device,
-- assigned_at) and at its result (running -> done: finished_at, times, log). Both
-- changed `state`, a key of jobs_campaign and the predicate of jobs_open, so neither
-- could be a heap-only (HOT) update: every update wrote a new entry into every index of
-- jobs (four) and left the old ones for vacuum.
--
-- PostgreSQL makes an update HOT when no column an index uses (as key, expression or
-- predicate) changes its value and the new version fits on the row's page. So:
--   * is_open, a stored generated column, is true exactly while the job is queued or
--     running. The indexes use it instead of state: assignment (queued -> running),
--     requeue (running -> queued) and the lease's other changes keep is_open true and
--     touch no indexed column, so they are HOT. The result (running -> done) turns
--     is_open false, so it still updates the indexes: one non-HOT update per job
--     instead of two, and the finished job leaves the open-job index as before.
--   * jobs_open indexes the open jobs by campaign and platform (the scheduler's
--     queries: open jobs at start, per campaign, per campaign and platform);
--     jobs_campaign indexes all jobs by campaign and platform, without state.
--   * fillfactor 50 leaves room on each page for the new versions of its rows. A HOT
--     version must fit on its row's page, and the versions one statement writes cannot
--     be pruned before it commits: a batch of assignments that covers whole pages (a
--     thousand workers asking at once) needs room for a new version of most rows of a
--     page. About 34 new jobs fill half a page; their assigned versions (about 140
--     bytes each) mostly fit in the other half. At 70, about 48 rows share a page and
--     only some 20 new versions fit: with a thousand simulated workers fewer than half
--     the assignments were HOT. The cost is space: 250,000 queued jobs take 56 MB of heap instead of 28 MB
--     (40 MB at 70). The rewrite of this migration applies it to the rows there already.
-- The queries filter on is_open where they filtered on state IN ('queued', 'running'):
-- the same rows, by definition of the column.

ALTER TABLE jobs SET (fillfactor = 50);
ALTER TABLE jobs ADD COLUMN is_open boolean NOT NULL
	GENERATED ALWAYS AS (state IN ('queued', 'running')) STORED;
DROP INDEX jobs_open;
DROP INDEX jobs_campaign;
CREATE INDEX jobs_campaign ON jobs (campaign_id, platform_id);
CREATE INDEX jobs_open ON jobs (campaign_id, platform_id) WHERE is_open;
