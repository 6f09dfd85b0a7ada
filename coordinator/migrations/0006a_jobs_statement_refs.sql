-- Jobs' references checked once per statement instead of once per row (docs/store.md,
-- "Job references"). A campaign's submit writes all its jobs in one statement (250k rows
-- for a large campaign); the three row-level foreign keys of jobs (campaign, candidate,
-- platform) cost a trigger call and an index probe per row. They are replaced by:
--   * an AFTER INSERT statement trigger that checks the distinct (campaign, candidate,
--     platform) triples of the inserted rows, locks the referenced rows FOR KEY SHARE
--     as a foreign key does, and refuses the statement with foreign_key_violation naming
--     the first bad job (the candidate must also belong to the job's campaign);
--   * a row trigger for an UPDATE that changes a job's references (nothing in the
--     coordinator does; the hot path never sets these columns, so it never fires);
--   * on the referenced tables, what the foreign keys' actions did: deleting campaigns
--     or candidates deletes their jobs (was ON DELETE CASCADE), deleting a platform
--     that jobs use or changing a referenced id is refused (was NO ACTION).
-- jobs.worker_id keeps its foreign key (NULL at insert, so no per-row probe).

DO $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT conname FROM pg_constraint
	         WHERE conrelid = 'jobs'::regclass AND contype = 'f'
	           AND confrelid IN ('campaigns'::regclass, 'candidates'::regclass, 'platforms'::regclass)
	LOOP
		EXECUTE format('ALTER TABLE jobs DROP CONSTRAINT %I', r.conname);
	END LOOP;
END
$$;

-- The first row of new_jobs (a transition table of jobs) whose references are bad.
CREATE FUNCTION kgb_jobs_refs_check() RETURNS trigger
	LANGUAGE plpgsql AS
$$
DECLARE
	bad record;
BEGIN
	PERFORM 1 FROM campaigns WHERE id IN (SELECT DISTINCT campaign_id FROM new_jobs) FOR KEY SHARE;
	PERFORM 1 FROM candidates WHERE id IN (SELECT DISTINCT candidate_id FROM new_jobs) FOR KEY SHARE;
	PERFORM 1 FROM platforms WHERE id IN (SELECT DISTINCT platform_id FROM new_jobs) FOR KEY SHARE;
	SELECT r.job, r.campaign_id, r.candidate_id, r.platform_id, k.id AS k_id, c.id AS c_id,
	       c.campaign_id AS c_campaign, p.id AS p_id
	INTO bad
	FROM (SELECT min(id) AS job, campaign_id, candidate_id, platform_id FROM new_jobs
	      GROUP BY campaign_id, candidate_id, platform_id) r
	LEFT JOIN campaigns k ON k.id = r.campaign_id
	LEFT JOIN candidates c ON c.id = r.candidate_id
	LEFT JOIN platforms p ON p.id = r.platform_id
	WHERE k.id IS NULL OR c.id IS NULL OR p.id IS NULL OR c.campaign_id <> r.campaign_id
	ORDER BY r.job
	LIMIT 1;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	IF bad.k_id IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', TABLE = 'jobs', COLUMN = 'campaign_id',
			MESSAGE = format('jobs: job %s: campaign_id %s: no such campaign', bad.job, bad.campaign_id);
	ELSIF bad.c_id IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', TABLE = 'jobs', COLUMN = 'candidate_id',
			MESSAGE = format('jobs: job %s: candidate_id %s: no such candidate', bad.job, bad.candidate_id);
	ELSIF bad.p_id IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', TABLE = 'jobs', COLUMN = 'platform_id',
			MESSAGE = format('jobs: job %s: platform_id %s: no such platform', bad.job, bad.platform_id);
	ELSE
		RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', TABLE = 'jobs', COLUMN = 'candidate_id',
			MESSAGE = format('jobs: job %s: candidate_id %s belongs to campaign %s, not to campaign_id %s',
			                 bad.job, bad.candidate_id, bad.c_campaign, bad.campaign_id);
	END IF;
END
$$;
CREATE TRIGGER jobs_refs_insert AFTER INSERT ON jobs
	REFERENCING NEW TABLE AS new_jobs
	FOR EACH STATEMENT EXECUTE FUNCTION kgb_jobs_refs_check();

CREATE FUNCTION kgb_jobs_refs_check_row() RETURNS trigger
	LANGUAGE plpgsql AS
$$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM campaigns WHERE id = NEW.campaign_id FOR KEY SHARE) THEN
		RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', TABLE = 'jobs', COLUMN = 'campaign_id',
			MESSAGE = format('jobs: job %s: campaign_id %s: no such campaign', NEW.id, NEW.campaign_id);
	END IF;
	IF NOT EXISTS (SELECT 1 FROM candidates WHERE id = NEW.candidate_id AND campaign_id = NEW.campaign_id
	               FOR KEY SHARE) THEN
		RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', TABLE = 'jobs', COLUMN = 'candidate_id',
			MESSAGE = format('jobs: job %s: candidate_id %s: no such candidate in campaign %s', NEW.id,
			                 NEW.candidate_id, NEW.campaign_id);
	END IF;
	IF NOT EXISTS (SELECT 1 FROM platforms WHERE id = NEW.platform_id FOR KEY SHARE) THEN
		RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', TABLE = 'jobs', COLUMN = 'platform_id',
			MESSAGE = format('jobs: job %s: platform_id %s: no such platform', NEW.id, NEW.platform_id);
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER jobs_refs_update AFTER UPDATE OF campaign_id, candidate_id, platform_id ON jobs
	FOR EACH ROW
	WHEN (OLD.campaign_id IS DISTINCT FROM NEW.campaign_id OR OLD.candidate_id IS DISTINCT FROM NEW.candidate_id
	      OR OLD.platform_id IS DISTINCT FROM NEW.platform_id)
	EXECUTE FUNCTION kgb_jobs_refs_check_row();

-- Deleting campaigns or candidates deletes their jobs (and, by results' own foreign
-- key, the jobs' results).
CREATE FUNCTION kgb_jobs_cascade() RETURNS trigger
	LANGUAGE plpgsql AS
$$
BEGIN
	IF TG_TABLE_NAME = 'campaigns' THEN
		DELETE FROM jobs WHERE campaign_id IN (SELECT id FROM gone);
	ELSE
		DELETE FROM jobs WHERE candidate_id IN (SELECT id FROM gone);
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER campaigns_jobs_cascade AFTER DELETE ON campaigns
	REFERENCING OLD TABLE AS gone
	FOR EACH STATEMENT EXECUTE FUNCTION kgb_jobs_cascade();
CREATE TRIGGER candidates_jobs_cascade AFTER DELETE ON candidates
	REFERENCING OLD TABLE AS gone
	FOR EACH STATEMENT EXECUTE FUNCTION kgb_jobs_cascade();

-- A platform that jobs use cannot be deleted.
CREATE FUNCTION kgb_platforms_in_use() RETURNS trigger
	LANGUAGE plpgsql AS
$$
DECLARE
	j record;
BEGIN
	SELECT jobs.id, jobs.platform_id INTO j FROM jobs JOIN gone ON gone.id = jobs.platform_id LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', TABLE = 'platforms',
			MESSAGE = format('platforms: platform %s is used by job %s', j.platform_id, j.id);
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER platforms_jobs_in_use AFTER DELETE ON platforms
	REFERENCING OLD TABLE AS gone
	FOR EACH STATEMENT EXECUTE FUNCTION kgb_platforms_in_use();

-- Changing the id of a campaign, candidate or platform that jobs refer to is refused.
CREATE FUNCTION kgb_jobs_ref_key_update() RETURNS trigger
	LANGUAGE plpgsql AS
$$
BEGIN
	IF (TG_TABLE_NAME = 'campaigns' AND EXISTS (SELECT 1 FROM jobs WHERE campaign_id = OLD.id))
	   OR (TG_TABLE_NAME = 'candidates' AND EXISTS (SELECT 1 FROM jobs WHERE candidate_id = OLD.id))
	   OR (TG_TABLE_NAME = 'platforms' AND EXISTS (SELECT 1 FROM jobs WHERE platform_id = OLD.id)) THEN
		RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', TABLE = TG_TABLE_NAME,
			MESSAGE = format('%s: id %s is referenced by jobs and cannot change', TG_TABLE_NAME, OLD.id);
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER campaigns_jobs_key AFTER UPDATE OF id ON campaigns
	FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION kgb_jobs_ref_key_update();
CREATE TRIGGER candidates_jobs_key AFTER UPDATE OF id ON candidates
	FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION kgb_jobs_ref_key_update();
CREATE TRIGGER platforms_jobs_key AFTER UPDATE OF id ON platforms
	FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION kgb_jobs_ref_key_update();
