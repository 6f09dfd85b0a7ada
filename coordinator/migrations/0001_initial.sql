-- kgb store, version 1: platforms, workers, devices, campaigns, candidates, jobs,
-- results. See docs/store.md for the meaning of every column.

CREATE TABLE platforms (
	id          serial PRIMARY KEY,
	name        text NOT NULL UNIQUE,
	backend     text NOT NULL,
	device_name text NOT NULL,
	arch        text NOT NULL DEFAULT '',
	first_seen  timestamptz NOT NULL DEFAULT now(),
	last_seen   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE workers (
	id            bigserial PRIMARY KEY,
	name          text NOT NULL,
	hostname      text NOT NULL,
	version       text NOT NULL DEFAULT '',
	pid           integer,
	state         text NOT NULL DEFAULT 'alive' CHECK (state IN ('alive', 'lost', 'gone')),
	registered_at timestamptz NOT NULL DEFAULT now(),
	last_seen     timestamptz NOT NULL DEFAULT now(),
	UNIQUE (name, hostname)
);

CREATE TABLE devices (
	worker_id      bigint NOT NULL REFERENCES workers (id) ON DELETE CASCADE,
	idx            integer NOT NULL,
	platform_id    integer NOT NULL REFERENCES platforms (id),
	backend        text NOT NULL,
	name           text NOT NULL,
	arch           text NOT NULL DEFAULT '',
	memory_bytes   bigint NOT NULL DEFAULT 0,
	driver_version text NOT NULL DEFAULT '',
	compute_units  integer NOT NULL DEFAULT 0,
	l2_bytes       bigint NOT NULL DEFAULT 0,
	slots          integer NOT NULL DEFAULT 1,
	updated_at     timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (worker_id, idx)
);

CREATE TABLE campaigns (
	id               bigserial PRIMARY KEY,
	name             text NOT NULL,
	state            text NOT NULL DEFAULT 'queued'
	                 CHECK (state IN ('queued', 'running', 'done', 'cancelled')),
	priority         integer NOT NULL DEFAULT 0,
	seed             bigint NOT NULL,
	shard_size       integer NOT NULL CHECK (shard_size > 0),
	time_limit_ms    integer NOT NULL,
	timing_budget_ms integer NOT NULL,
	timing           boolean NOT NULL DEFAULT true,
	baseline         text,
	platforms        jsonb,              -- null: every platform, also those that join later
	origin           text NOT NULL DEFAULT '',
	manifest         jsonb NOT NULL,
	created_at       timestamptz NOT NULL DEFAULT now(),
	finished_at      timestamptz
);

CREATE TABLE candidates (
	id          bigserial PRIMARY KEY,
	campaign_id bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
	idx         integer NOT NULL,
	method      text NOT NULL,
	op          text NOT NULL,
	case_count  integer NOT NULL,
	plan        jsonb NOT NULL,
	sources     jsonb NOT NULL DEFAULT '[]',   -- [{"name": ..., "content": ...}]
	tokens      double precision NOT NULL DEFAULT 0,
	gen_seconds double precision NOT NULL DEFAULT 0,
	origin      text NOT NULL DEFAULT '',
	UNIQUE (campaign_id, idx)
);
CREATE INDEX candidates_campaign ON candidates (campaign_id);

CREATE TABLE jobs (
	id           bigserial PRIMARY KEY,
	campaign_id  bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
	candidate_id bigint NOT NULL REFERENCES candidates (id) ON DELETE CASCADE,
	platform_id  integer NOT NULL REFERENCES platforms (id),
	op           text NOT NULL,
	case_lo      integer NOT NULL,         -- cases [case_lo, case_hi)
	case_hi      integer NOT NULL,
	state        text NOT NULL DEFAULT 'queued'
	             CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
	epoch        bigint NOT NULL DEFAULT 0,
	attempts     integer NOT NULL DEFAULT 0,
	worker_id    bigint REFERENCES workers (id) ON DELETE SET NULL,
	device_idx   integer,
	assigned_at  timestamptz,
	not_before   timestamptz,
	finished_at  timestamptz,
	last_error   text,
	compile_ms   double precision,
	device_ms    double precision,
	wall_ms      double precision,
	log          text,
	created_at   timestamptz NOT NULL DEFAULT now(),
	CHECK (case_lo < case_hi),
	UNIQUE (candidate_id, platform_id, case_lo)
);
CREATE INDEX jobs_open ON jobs (state) WHERE state IN ('queued', 'running');
CREATE INDEX jobs_campaign ON jobs (campaign_id, platform_id, state);

CREATE TABLE results (
	job_id            bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	case_index        integer NOT NULL,
	verdict           text NOT NULL,
	max_abs_err       double precision,
	max_rel_err       double precision,
	timed             boolean NOT NULL DEFAULT false,
	median_ns         double precision,
	min_ns            double precision,
	p10_ns            double precision,
	p90_ns            double precision,
	mean_ns           double precision,
	stdev_ns          double precision,
	samples           integer,
	rse               double precision,
	throttled         boolean,
	throttled_samples integer,
	sm_clock_mhz      double precision,
	temperature_c     double precision,
	timing_method     text,
	message           text NOT NULL DEFAULT '',
	epoch             bigint NOT NULL,
	worker_id         bigint,
	recorded_at       timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (job_id, case_index)
);
