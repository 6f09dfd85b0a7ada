-- Operating the cluster (docs/cli.md, "Operating the cluster") and what counts as the
-- kernel's failure.

-- kgb platform retire: campaigns for every platform ("all") leave a retired platform
-- out; a worker that registers it again brings it back (retired_at NULL).
ALTER TABLE platforms ADD COLUMN retired_at timestamptz;

-- kgb worker drain: the worker gets no new job (its running ones finish) until
-- kgb worker resume; kept across its restarts and the coordinator's.
ALTER TABLE workers ADD COLUMN drained boolean NOT NULL DEFAULT false;

-- kgb hold: the campaign's jobs get no assignment until kgb release.
ALTER TABLE campaigns ADD COLUMN held boolean NOT NULL DEFAULT false;

-- `unsupported` (the worker's environment cannot run the candidate's kind: no torch,
-- no NVRTC, no Triton) is the environment's failure, not the kernel's: it stays out
-- of kernel failures and, with infra_error, out of accuracy.
CREATE OR REPLACE FUNCTION kgb_kernel_failure(verdict text) RETURNS boolean
	LANGUAGE sql IMMUTABLE AS
$$ SELECT verdict NOT IN ('pass', 'infra_error', 'not_run', 'unspecified', 'unsupported') $$;
