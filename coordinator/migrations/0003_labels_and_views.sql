-- Case labels on results, and the views every figure of the CLI can be read from
-- (docs/store.md has example queries).

-- The case's parameters as the catalog names them ("dtype=f16 shape=[33,65]
-- layout=transposed"); set by the coordinator from its own catalog.
ALTER TABLE results ADD COLUMN label text;

-- Kernel failures, as opposed to infrastructure failures and cases not run.
CREATE FUNCTION kgb_kernel_failure(verdict text) RETURNS boolean
	LANGUAGE sql IMMUTABLE AS
$$ SELECT verdict NOT IN ('pass', 'infra_error', 'not_run', 'unspecified') $$;

-- One row per recorded case.
CREATE VIEW kgb_case_results AS
SELECT j.campaign_id, c.name AS campaign, k.method, k.op, p.name AS platform, r.job_id,
       r.case_index, r.label, r.verdict, kgb_kernel_failure(r.verdict) AS kernel_failure,
       r.message, r.max_abs_err, r.max_rel_err, r.timed, r.median_ns, r.min_ns, r.p10_ns, r.p90_ns,
       r.samples, r.rse, r.throttled, r.epoch, w.name AS worker, r.recorded_at
FROM results r
JOIN jobs j ON j.id = r.job_id
JOIN candidates k ON k.id = j.candidate_id
JOIN campaigns c ON c.id = j.campaign_id
JOIN platforms p ON p.id = j.platform_id
LEFT JOIN workers w ON w.id = r.worker_id;

-- Per campaign, method, platform and operator: case counts by outcome, whether every
-- case passed, and the geometric mean of the timed passing cases' median time.
CREATE VIEW kgb_operator_results AS
SELECT campaign_id, method, platform, op,
       count(*) AS cases,
       count(*) FILTER (WHERE verdict = 'pass') AS passed,
       count(*) FILTER (WHERE kernel_failure) AS failed,
       count(*) FILTER (WHERE verdict = 'infra_error') AS infra_failed,
       count(*) FILTER (WHERE verdict = 'not_run') AS not_run,
       bool_and(verdict = 'pass') AS solved,
       exp(avg(ln(median_ns)) FILTER (WHERE timed AND verdict = 'pass' AND median_ns > 0)) AS geomean_ns
FROM kgb_case_results
GROUP BY campaign_id, method, platform, op;

-- Per timed case passing for both a method and its campaign's baseline (the manifest's
-- baseline method) on the same platform: the speedup (baseline time / method time)
-- with its relative standard error, combined from both timings, and whether the
-- two-standard-error interval includes 1 (a tie).
CREATE VIEW kgb_case_speedups AS
SELECT m.campaign_id, m.method, b.method AS baseline, m.platform, m.op, m.case_index, m.label,
       b.median_ns / m.median_ns AS speedup,
       sqrt(coalesce(m.rse, 0) ^ 2 + coalesce(b.rse, 0) ^ 2) AS speedup_rse,
       abs(ln(b.median_ns / m.median_ns)) <= 2 * sqrt(coalesce(m.rse, 0) ^ 2 + coalesce(b.rse, 0) ^ 2) AS tie
FROM kgb_case_results m
JOIN campaigns c ON c.id = m.campaign_id AND c.baseline IS NOT NULL
JOIN kgb_case_results b ON b.campaign_id = m.campaign_id AND b.method = c.baseline
     AND b.platform = m.platform AND b.op = m.op AND b.case_index = m.case_index
WHERE m.timed AND b.timed AND m.verdict = 'pass' AND b.verdict = 'pass'
  AND m.median_ns > 0 AND b.median_ns > 0 AND m.method <> c.baseline;

-- Per campaign, method and platform: operators, operators solved (every case passes),
-- accuracy, and the geometric mean over solved operators of each operator's geometric
-- mean speedup against the baseline (KernelGenBench's aggregation).
CREATE VIEW kgb_method_summary AS
WITH op_speed AS (
	SELECT campaign_id, method, platform, op, exp(avg(ln(speedup))) AS speedup
	FROM kgb_case_speedups GROUP BY campaign_id, method, platform, op
)
SELECT o.campaign_id, o.method, o.platform,
       count(*) AS operators,
       count(*) FILTER (WHERE o.solved) AS solved,
       round(100.0 * count(*) FILTER (WHERE o.solved) / count(*), 1) AS accuracy_pct,
       exp(avg(ln(s.speedup)) FILTER (WHERE o.solved)) AS geomean_speedup,
       count(*) FILTER (WHERE o.solved AND s.speedup > 1) AS faster_ops
FROM kgb_operator_results o
LEFT JOIN op_speed s USING (campaign_id, method, platform, op)
GROUP BY o.campaign_id, o.method, o.platform;
