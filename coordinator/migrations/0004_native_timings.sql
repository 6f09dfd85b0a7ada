-- Native baselines (docs/native.md): the timings of native candidates (the operator's
-- own library, plan {"kind": "native"}) kept per platform, device model, driver,
-- library version, operator and case, so that every later campaign on that platform
-- can report speedups against them without running the library again.

CREATE TABLE native_timings (
	platform_id    integer NOT NULL REFERENCES platforms (id),
	device_name    text NOT NULL,
	driver_version text NOT NULL DEFAULT '',
	library        text NOT NULL,              -- "torch 2.11.0", "composite (torch 2.11.0)", ...
	op             text NOT NULL,
	case_index     integer NOT NULL,
	label          text,
	median_ns      double precision NOT NULL,
	min_ns         double precision,
	rse            double precision,
	samples        integer,
	timing_method  text,
	campaign_id    bigint,                     -- where it was measured (the campaign may be gone)
	job_id         bigint,
	recorded_at    timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (platform_id, device_name, driver_version, library, op, case_index)
);
CREATE INDEX native_timings_case ON native_timings (platform_id, op, case_index);

-- Filled from the results themselves: a passing timed case of a native candidate is
-- copied here (the newest measurement of a key replaces the older one).
CREATE FUNCTION kgb_native_timing_record() RETURNS trigger
	LANGUAGE plpgsql AS
$$
DECLARE
	j record;
BEGIN
	IF NEW.verdict <> 'pass' OR NOT NEW.timed OR NEW.median_ns IS NULL OR NEW.median_ns <= 0 THEN
		RETURN NULL;
	END IF;
	SELECT c.op, jb.platform_id, jb.campaign_id, coalesce(d.name, p.device_name) AS device_name,
	       coalesce(d.driver_version, '') AS driver_version
	  INTO j
	  FROM jobs jb
	  JOIN candidates c ON c.id = jb.candidate_id
	  JOIN platforms p ON p.id = jb.platform_id
	  LEFT JOIN devices d ON d.worker_id = jb.worker_id AND d.idx = jb.device_idx
	 WHERE jb.id = NEW.job_id AND c.plan->>'kind' = 'native';
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	INSERT INTO native_timings (platform_id, device_name, driver_version, library, op, case_index, label,
	                            median_ns, min_ns, rse, samples, timing_method, campaign_id, job_id, recorded_at)
	VALUES (j.platform_id, j.device_name, j.driver_version,
	        -- the timing method of a native case ends with "[library version]"
	        coalesce(substring(NEW.timing_method FROM '\[([^]]*)\]\s*$'), NEW.timing_method, ''),
	        j.op, NEW.case_index, NEW.label, NEW.median_ns, NEW.min_ns, NEW.rse, NEW.samples,
	        NEW.timing_method, j.campaign_id, NEW.job_id, NEW.recorded_at)
	ON CONFLICT (platform_id, device_name, driver_version, library, op, case_index) DO UPDATE
	   SET label = EXCLUDED.label, median_ns = EXCLUDED.median_ns, min_ns = EXCLUDED.min_ns,
	       rse = EXCLUDED.rse, samples = EXCLUDED.samples, timing_method = EXCLUDED.timing_method,
	       campaign_id = EXCLUDED.campaign_id, job_id = EXCLUDED.job_id, recorded_at = EXCLUDED.recorded_at;
	RETURN NULL;
END
$$;

CREATE TRIGGER results_native_timing AFTER INSERT OR UPDATE ON results
	FOR EACH ROW EXECUTE FUNCTION kgb_native_timing_record();

-- The native baseline of each (platform, operator, case): the newest stored native
-- timing, whichever library or driver measured it (docs/native.md).
CREATE VIEW kgb_native_baseline AS
SELECT DISTINCT ON (n.platform_id, n.op, n.case_index)
       n.platform_id, p.name AS platform, n.device_name, n.driver_version, n.library, n.op,
       n.case_index, n.label, n.median_ns, n.rse, n.samples, n.timing_method, n.campaign_id, n.recorded_at
FROM native_timings n
JOIN platforms p ON p.id = n.platform_id
ORDER BY n.platform_id, n.op, n.case_index, n.recorded_at DESC;
