-- kgb generate: runs of an LLM sampled over rounds (docs/methods.md). Every answer the
-- model API gave is a row, with the usage the API reported and the code taken from it,
-- linked through its round's campaign to the candidate it became and so to its
-- verdicts. The API key is never stored: base_url is the endpoint without credentials.

CREATE TABLE gen_runs (
	id         bigserial PRIMARY KEY,
	run_key    text NOT NULL UNIQUE,      -- sha256 of the run's defining parameters
	method     text NOT NULL,
	model      text NOT NULL,
	api        text NOT NULL CHECK (api IN ('openai', 'anthropic')),
	base_url   text NOT NULL,
	params     jsonb NOT NULL,            -- everything needed to resume it (no key)
	owner      text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX gen_runs_method ON gen_runs (method);

-- One campaign per round; found again by a resumed run instead of submitted twice.
CREATE TABLE gen_rounds (
	run_id      bigint NOT NULL REFERENCES gen_runs (id) ON DELETE CASCADE,
	round       integer NOT NULL CHECK (round >= 0),
	campaign_id bigint REFERENCES campaigns (id) ON DELETE SET NULL,
	PRIMARY KEY (run_id, round)
);

CREATE TABLE gen_samples (
	run_id         bigint NOT NULL REFERENCES gen_runs (id) ON DELETE CASCADE,
	op             text NOT NULL,
	round          integer NOT NULL CHECK (round >= 0),
	sample         integer NOT NULL CHECK (sample >= 0),
	prompt_hash    text NOT NULL,             -- sha256 of the request's messages
	request        jsonb NOT NULL,            -- model, temperature, max_tokens, ...
	http_status    integer NOT NULL,          -- of the last attempt (0: no HTTP answer)
	attempts       integer NOT NULL CHECK (attempts >= 1),
	wall_s         double precision NOT NULL, -- over every attempt, backoff included
	input_tokens   bigint,                    -- NULL: the API did not report it
	output_tokens  bigint,
	cache_write_tokens bigint,
	cache_read_tokens  bigint,
	reasoning_tokens   bigint,
	finish_reason  text NOT NULL DEFAULT '',
	content        text NOT NULL DEFAULT '',  -- the model's answer text
	code           jsonb,                     -- {"files": {name: text}}; NULL: none found
	error          text NOT NULL DEFAULT '',  -- why there is no code
	cand_idx       integer,                   -- the candidate's idx in its round's campaign
	recorded_at    timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (run_id, op, round, sample)
);

-- Per sample: the candidate it became and its cases over every platform of its round.
CREATE VIEW gen_sample_verdicts AS
SELECT s.run_id, s.op, s.round, s.sample, c.id AS candidate_id,
       coalesce(v.cases_total, 0) AS cases_total, coalesce(v.cases_done, 0) AS cases_done,
       coalesce(v.cases_passed, 0) AS cases_passed, coalesce(v.open_jobs, 0) AS open_jobs,
       coalesce(c.id IS NOT NULL AND v.cases_total > 0 AND v.cases_passed = v.cases_total, false) AS passed
FROM gen_samples s
LEFT JOIN gen_rounds g ON g.run_id = s.run_id AND g.round = s.round
LEFT JOIN candidates c ON c.campaign_id = g.campaign_id AND c.idx = s.cand_idx
LEFT JOIN LATERAL (
	SELECT sum(j.case_hi - j.case_lo) AS cases_total, sum(r.done) AS cases_done, sum(r.passed) AS cases_passed,
	       count(*) FILTER (WHERE j.state IN ('queued', 'running')) AS open_jobs
	FROM jobs j
	CROSS JOIN LATERAL (SELECT count(*) AS done, count(*) FILTER (WHERE r.verdict = 'pass') AS passed
	                    FROM results r WHERE r.job_id = j.id) r
	WHERE j.campaign_id = c.campaign_id AND j.candidate_id = c.id) v ON true;
