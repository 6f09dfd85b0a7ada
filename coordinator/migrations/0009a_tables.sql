-- The benchmark's tables (docs/tables.md): accuracy, Pass@K and pass@k, speedup,
-- fast_p, tokens and solving time per method, platform and operator source, the
-- matched-subset speedup and the cross-chip table, over a selection of campaigns and an
-- operator set. Every figure of `kgb tables` is one of these functions' columns; the
-- coordinator only selects from them.
--
-- An operator set is a jsonb array [{"op": NAME, "source": "aten" | "vllm" | "cublas"}]:
-- the coordinator makes it from its catalog (MS, MC, or the campaigns' own operators).

-- Verdicts of a kernel caught cheating: a harness comparing outputs alone would have
-- passed it (docs/security.md). The raw pass rate counts them as passes, the clean one
-- does not.
CREATE FUNCTION kgb_cheat_verdict(v text) RETURNS boolean
	LANGUAGE sql IMMUTABLE AS
$$ SELECT v IN ('host_compute', 'no_launch', 'host_sync', 'foreign_pointer', 'stale_result') $$;

-- One row per candidate and platform it has jobs on. clean: every public case passed,
-- every held-out case ran and passed, no cheat verdict; raw: every public case passed
-- or got a cheat verdict (held-out cases ignored). The first failing case is the
-- lowest case index whose verdict is not pass, held-out cases included.
CREATE VIEW kgb_candidate_outcomes AS
SELECT c.campaign_id, c.id AS candidate_id, c.method, c.op, c.round, c.sample, c.model, j.platform_id,
       p.name AS platform, c.case_count AS cases,
       count(r.case_index) FILTER (WHERE r.case_index < coalesce(c.heldout_lo, 2147483647)) AS cases_run,
       count(*) FILTER (WHERE r.verdict = 'pass' AND r.case_index < coalesce(c.heldout_lo, 2147483647))
           AS cases_passed,
       count(*) FILTER (WHERE r.verdict = 'pass' AND r.case_index < coalesce(c.heldout_lo, 2147483647))
               = c.case_count
           AND count(*) FILTER (WHERE r.verdict = 'pass' AND r.case_index >= c.heldout_lo)
               = CASE WHEN c.heldout_lo IS NULL THEN 0 ELSE k.heldout END
           AND count(*) FILTER (WHERE kgb_cheat_verdict(r.verdict)) = 0 AS clean,
       count(*) FILTER (WHERE (r.verdict = 'pass' OR kgb_cheat_verdict(r.verdict))
                        AND r.case_index < coalesce(c.heldout_lo, 2147483647)) = c.case_count AS raw,
       (array_agg(r.case_index ORDER BY r.case_index) FILTER (WHERE r.verdict <> 'pass'))[1] AS fail_case,
       (array_agg(r.label ORDER BY r.case_index) FILTER (WHERE r.verdict <> 'pass'))[1] AS fail_label,
       (array_agg(r.verdict ORDER BY r.case_index) FILTER (WHERE r.verdict <> 'pass'))[1] AS fail_verdict,
       (array_agg(r.message ORDER BY r.case_index) FILTER (WHERE r.verdict <> 'pass'))[1] AS fail_message
FROM candidates c
JOIN campaigns k ON k.id = c.campaign_id
JOIN jobs j ON j.candidate_id = c.id
JOIN platforms p ON p.id = j.platform_id
LEFT JOIN results r ON r.job_id = j.id
GROUP BY c.campaign_id, c.id, j.platform_id, p.name, k.heldout;

-- Per timed public case a candidate passed: the speedup baseline time / candidate time,
-- the baseline being its campaign's baseline method (that method's first candidate, by
-- round, sample and id, that passed the case on the platform) or, in a campaign without
-- one, the platform's stored native timing (docs/native.md); rse from both timings.
CREATE VIEW kgb_candidate_case_speedups AS
SELECT c.campaign_id, c.id AS candidate_id, j.platform_id, r.case_index, b.median_ns / r.median_ns AS speedup,
       sqrt(coalesce(r.rse, 0) ^ 2 + b.rse ^ 2) AS rse
FROM candidates c
JOIN campaigns k ON k.id = c.campaign_id
JOIN jobs j ON j.candidate_id = c.id
JOIN results r ON r.job_id = j.id
JOIN LATERAL ((SELECT r2.median_ns, coalesce(r2.rse, 0) AS rse
               FROM candidates c2 JOIN jobs j2 ON j2.candidate_id = c2.id JOIN results r2 ON r2.job_id = j2.id
               WHERE k.baseline IS NOT NULL AND c2.campaign_id = c.campaign_id AND c2.method = k.baseline
                 AND c2.op = c.op AND j2.platform_id = j.platform_id AND r2.case_index = r.case_index
                 AND r2.verdict = 'pass' AND r2.timed AND r2.median_ns > 0
               ORDER BY c2.round, c2.sample, c2.id LIMIT 1)
              UNION ALL
              (SELECT nb.median_ns, coalesce(nb.rse, 0)
               FROM kgb_native_baseline nb
               WHERE k.baseline IS NULL AND nb.platform_id = j.platform_id AND nb.op = c.op
                 AND nb.case_index = r.case_index)) b ON true
WHERE r.verdict = 'pass' AND r.timed AND r.median_ns > 0 AND r.case_index < coalesce(c.heldout_lo, 2147483647);

-- Per candidate and platform: the geometric mean speedup over its timed cases, the
-- standard error of its log (sqrt(sum rse^2) / n) and the platform's operator noise
-- floor (migration 0008) that widens its interval.
CREATE VIEW kgb_candidate_speedups AS
SELECT s.campaign_id, s.candidate_id, s.platform_id, p.name AS platform, count(*) AS timed_cases,
       exp(avg(ln(s.speedup))) AS speedup, sqrt(sum(s.rse ^ 2)) / count(*) AS speedup_rse,
       coalesce(f.op_floor, 0) AS noise_floor
FROM kgb_candidate_case_speedups s
JOIN platforms p ON p.id = s.platform_id
LEFT JOIN LATERAL kgb_noise_floor(s.platform_id, s.campaign_id) f ON true
GROUP BY s.candidate_id, s.platform_id, p.name, s.campaign_id, f.op_floor;

-- One row per method, platform and operator of the set (an operator the method has no
-- candidate for on the platform is there, not attempted). passed: some candidate is
-- clean; first_round: the lowest round with a clean candidate; candidate_id: the first
-- clean candidate by round, sample, campaign and id, whose speedup is the operator's
-- (so a method gains nothing from sampling speed). samples / samples_passed: round-0
-- candidates and the clean ones among them (pass@k's n and c). Tokens and generation
-- seconds: every candidate of the method for the operator, on any platform. A (method,
-- operator, round, sample) counts once, the earliest campaign's: a run imported and
-- submitted again, or a campaign re-run, adds no sample and no tokens.
CREATE FUNCTION kgb_table_ops(cids bigint[], opset jsonb)
	RETURNS TABLE (method text, platform text, op text, source text, candidates bigint, rounds integer,
	               samples bigint, samples_passed bigint, attempted boolean, passed boolean, passed_raw boolean,
	               first_round integer, candidate_id bigint, timed_cases bigint, speedup float8,
	               speedup_rse float8, noise_floor float8, speedup_low float8, speedup_high float8, tokens float8,
	               input_tokens numeric, output_tokens numeric, cache_write_tokens numeric,
	               cache_read_tokens numeric, reasoning_tokens numeric, gen_seconds float8)
	LANGUAGE sql STABLE AS
$$
WITH s AS (SELECT x->>'op' AS op, x->>'source' AS source FROM jsonb_array_elements(opset) x),
o AS (SELECT DISTINCT ON (method, op, round, sample, platform) *
      FROM kgb_candidate_outcomes WHERE campaign_id = ANY (cids) AND op IN (SELECT op FROM s)
      ORDER BY method, op, round, sample, platform, campaign_id, candidate_id),
mp AS (SELECT DISTINCT method, platform FROM o),
a AS (SELECT method, platform, op, count(*) AS candidates, max(round) + 1 AS rounds,
             count(*) FILTER (WHERE round = 0) AS samples, count(*) FILTER (WHERE round = 0 AND clean) AS samples_passed,
             bool_or(clean) AS passed, bool_or(raw) AS passed_raw, min(round) FILTER (WHERE clean) AS first_round,
             (array_agg(candidate_id ORDER BY round, sample, campaign_id, candidate_id) FILTER (WHERE clean))[1]
                 AS candidate_id
      FROM o GROUP BY method, platform, op),
t AS (SELECT c.method, c.op, sum(c.tokens) AS tokens, sum(c.input_tokens) AS input_tokens,
             sum(c.output_tokens) AS output_tokens, sum(c.cache_write_tokens) AS cache_write_tokens,
             sum(c.cache_read_tokens) AS cache_read_tokens, sum(c.reasoning_tokens) AS reasoning_tokens,
             sum(c.gen_seconds) AS gen_seconds
      FROM (SELECT DISTINCT ON (method, op, round, sample) * FROM candidates WHERE campaign_id = ANY (cids)
            ORDER BY method, op, round, sample, campaign_id, id) c
      GROUP BY c.method, c.op)
SELECT mp.method, mp.platform, s.op, s.source, coalesce(a.candidates, 0), coalesce(a.rounds, 0),
       coalesce(a.samples, 0), coalesce(a.samples_passed, 0), a.op IS NOT NULL, coalesce(a.passed, false),
       coalesce(a.passed_raw, false), a.first_round, a.candidate_id, sp.timed_cases, sp.speedup, sp.speedup_rse,
       sp.noise_floor,
       sp.speedup * exp(-2 * sqrt(sp.speedup_rse ^ 2 + sp.noise_floor ^ 2)),
       sp.speedup * exp(2 * sqrt(sp.speedup_rse ^ 2 + sp.noise_floor ^ 2)),
       coalesce(t.tokens, 0), t.input_tokens, t.output_tokens, t.cache_write_tokens, t.cache_read_tokens,
       t.reasoning_tokens, coalesce(t.gen_seconds, 0)
FROM mp CROSS JOIN s
LEFT JOIN a ON a.method = mp.method AND a.platform = mp.platform AND a.op = s.op
LEFT JOIN (SELECT * FROM kgb_candidate_speedups WHERE campaign_id = ANY (cids)) sp
     ON sp.candidate_id = a.candidate_id AND sp.platform = mp.platform
LEFT JOIN t ON t.method = mp.method AND t.op = s.op
ORDER BY mp.method, mp.platform, s.op
$$;

-- Per method and platform, and per operator source ('all': every operator of the set).
-- N = operators of the set (of that source). accuracy = passed / N (clean), accuracy_raw
-- = passed_raw / N. speedup: the geometric mean over passed operators of their speedup,
-- its interval exp(+-2 sqrt((sqrt(sum rse^2) / n)^2 + floor^2)) with the largest
-- operator floor (a slow moment moves every operator alike, so the floor is not divided
-- by n). fast_p = passed operators with speedup > p, over N and over the passed ones.
-- Tokens per success = tokens / passed, with and without cache reads.
CREATE FUNCTION kgb_table_summary(cids bigint[], opset jsonb)
	RETURNS TABLE (method text, platform text, source text, operators bigint, attempted bigint, passed bigint,
	               passed_raw bigint, accuracy float8, accuracy_raw float8, timed_ops bigint, speedup float8,
	               speedup_rse float8, noise_floor float8, speedup_low float8, speedup_high float8, fast_0_8 float8,
	               fast_1_0 float8, fast_1_5 float8, fast_0_8_passed float8, fast_1_0_passed float8,
	               fast_1_5_passed float8, tokens float8, input_tokens numeric, output_tokens numeric,
	               cache_write_tokens numeric, cache_read_tokens numeric, reasoning_tokens numeric,
	               tokens_per_success float8, tokens_per_success_no_cache_read float8, gen_seconds float8,
	               gen_seconds_per_op float8)
	LANGUAGE sql STABLE AS
$$
WITH g AS (
	SELECT t.method, t.platform, CASE WHEN grouping(t.source) = 1 THEN 'all' ELSE t.source END AS source,
	       count(*) AS n, count(*) FILTER (WHERE t.attempted) AS attempted, count(*) FILTER (WHERE t.passed) AS passed,
	       count(*) FILTER (WHERE t.passed_raw) AS passed_raw, count(t.speedup) AS timed,
	       exp(avg(ln(t.speedup))) AS speedup, sqrt(sum(t.speedup_rse ^ 2)) / nullif(count(t.speedup), 0) AS rse,
	       coalesce(max(t.noise_floor), 0) AS floor,
	       count(*) FILTER (WHERE t.speedup > 0.8) AS f08, count(*) FILTER (WHERE t.speedup > 1.0) AS f10,
	       count(*) FILTER (WHERE t.speedup > 1.5) AS f15,
	       sum(t.tokens) AS tokens, sum(t.input_tokens) AS input_tokens, sum(t.output_tokens) AS output_tokens,
	       sum(t.cache_write_tokens) AS cache_write_tokens, sum(t.cache_read_tokens) AS cache_read_tokens,
	       sum(t.reasoning_tokens) AS reasoning_tokens, sum(t.gen_seconds) AS gen_seconds
	FROM kgb_table_ops(cids, opset) t
	GROUP BY GROUPING SETS ((t.method, t.platform, t.source), (t.method, t.platform)))
SELECT g.method, g.platform, g.source, g.n, g.attempted, g.passed, g.passed_raw, g.passed::float8 / g.n,
       g.passed_raw::float8 / g.n, g.timed, g.speedup, g.rse, g.floor,
       g.speedup * exp(-2 * sqrt(g.rse ^ 2 + g.floor ^ 2)), g.speedup * exp(2 * sqrt(g.rse ^ 2 + g.floor ^ 2)),
       g.f08::float8 / g.n, g.f10::float8 / g.n, g.f15::float8 / g.n,
       g.f08::float8 / nullif(g.passed, 0), g.f10::float8 / nullif(g.passed, 0), g.f15::float8 / nullif(g.passed, 0),
       g.tokens, g.input_tokens, g.output_tokens, g.cache_write_tokens, g.cache_read_tokens, g.reasoning_tokens,
       g.tokens / nullif(g.passed, 0), (g.tokens - coalesce(g.cache_read_tokens, 0)) / nullif(g.passed, 0),
       g.gen_seconds, g.gen_seconds / g.n
FROM g
ORDER BY g.method, g.platform, g.source <> 'all', g.source
$$;

-- Pass@K as KernelGenBench defines it (rounds regenerate only what failed): the share
-- of the N operators whose first clean round is below K. pass@k, the unbiased
-- estimator from n independent samples of round 0 of which c are clean, averaged over
-- the N operators: 1 - C(n-c, k) / C(n, k) = 1 - prod_{i = n-c+1..n} (1 - k / i)
-- (an operator without samples counts 0; NULL when an attempted operator has n < k).
CREATE FUNCTION kgb_table_pass_at_k(cids bigint[], opset jsonb)
	RETURNS TABLE (method text, platform text, k integer, operators bigint, pass_at_k_rounds float8,
	               pass_at_k_unbiased float8)
	LANGUAGE sql STABLE AS
$$
WITH t AS (SELECT * FROM kgb_table_ops(cids, opset)),
m AS (SELECT t.method, t.platform, greatest(max(t.rounds), max(t.samples))::integer AS kmax
      FROM t GROUP BY t.method, t.platform),
u AS (SELECT t.method, t.platform, g.k, t.first_round,
             CASE WHEN t.samples = 0 THEN 0
                  WHEN t.samples < g.k THEN NULL
                  WHEN t.samples - t.samples_passed < g.k THEN 1
                  ELSE 1 - (SELECT coalesce(exp(sum(ln(1 - g.k::float8 / i))), 1)
                            FROM generate_series(t.samples - t.samples_passed + 1, t.samples) i) END AS p
      FROM t JOIN m ON m.method = t.method AND m.platform = t.platform
      CROSS JOIN LATERAL generate_series(1, m.kmax) g(k))
SELECT u.method, u.platform, u.k, count(*), count(*) FILTER (WHERE u.first_round < u.k)::float8 / count(*),
       CASE WHEN bool_or(u.p IS NULL) THEN NULL ELSE avg(u.p) END
FROM u GROUP BY u.method, u.platform, u.k
ORDER BY u.method, u.platform, u.k
$$;

-- The matched-subset speedup: per platform, the operators every compared method (every
-- method of the selection but the campaigns' baselines) passed with a speedup, and each
-- method's geometric mean speedup over exactly those, with its interval as above.
CREATE FUNCTION kgb_table_matched(cids bigint[], opset jsonb)
	RETURNS TABLE (platform text, method text, operators bigint, speedup float8, speedup_low float8,
	               speedup_high float8)
	LANGUAGE sql STABLE AS
$$
WITH t AS (SELECT * FROM kgb_table_ops(cids, opset)
           WHERE method NOT IN (SELECT baseline FROM campaigns WHERE id = ANY (cids) AND baseline IS NOT NULL)),
m AS (SELECT t.platform, t.op FROM t GROUP BY t.platform, t.op HAVING bool_and(t.speedup IS NOT NULL)),
g AS (SELECT x.platform, x.method, count(t.op) AS n, exp(avg(ln(t.speedup))) AS speedup,
             sqrt(sum(t.speedup_rse ^ 2)) / nullif(count(t.op), 0) AS rse, coalesce(max(t.noise_floor), 0) AS floor
      FROM (SELECT DISTINCT t.platform, t.method FROM t) x
      LEFT JOIN (t JOIN m ON m.platform = t.platform AND m.op = t.op)
           ON t.platform = x.platform AND t.method = x.method
      GROUP BY x.platform, x.method)
SELECT g.platform, g.method, g.n, g.speedup, g.speedup * exp(-2 * sqrt(g.rse ^ 2 + g.floor ^ 2)),
       g.speedup * exp(2 * sqrt(g.rse ^ 2 + g.floor ^ 2))
FROM g ORDER BY g.platform, g.method
$$;

-- The cross-chip table: per method and platform, accuracy and speedup (as in the
-- summary's 'all' rows), the reference platform's accuracy, the drop from it in
-- percentage points and relative to it, and how many operators pass on the reference
-- and not here.
CREATE FUNCTION kgb_table_cross_chip(cids bigint[], opset jsonb, reference text)
	RETURNS TABLE (method text, platform text, accuracy float8, speedup float8, speedup_low float8,
	               speedup_high float8, reference_accuracy float8, drop_points float8, drop_relative float8,
	               lost bigint)
	LANGUAGE sql STABLE AS
$$
WITH t AS (SELECT * FROM kgb_table_ops(cids, opset)),
s AS (SELECT * FROM kgb_table_summary(cids, opset) WHERE source = 'all'),
l AS (SELECT a.method, a.platform, count(*) AS lost
      FROM t a JOIN t b ON b.method = a.method AND b.op = a.op AND b.platform = reference
      WHERE b.passed AND NOT a.passed GROUP BY a.method, a.platform)
SELECT s.method, s.platform, s.accuracy, s.speedup, s.speedup_low, s.speedup_high, r.accuracy,
       100 * (r.accuracy - s.accuracy), 1 - s.accuracy / nullif(r.accuracy, 0), coalesce(l.lost, 0)
FROM s
LEFT JOIN s r ON r.method = s.method AND r.platform = reference
LEFT JOIN l ON l.method = s.method AND l.platform = s.platform
ORDER BY s.method, s.platform <> reference, s.platform
$$;

-- The operators that pass on the reference platform and fail on another, per method:
-- the candidate that passed on the reference (the first clean one) and its first
-- failing case on the other platform (NULL: it has no failing case there yet).
CREATE FUNCTION kgb_table_lost(cids bigint[], opset jsonb, reference text)
	RETURNS TABLE (method text, op text, source text, platform text, candidate_id bigint, case_index integer,
	               label text, verdict text, message text)
	LANGUAGE sql STABLE AS
$$
WITH t AS (SELECT * FROM kgb_table_ops(cids, opset))
SELECT b.method, b.op, b.source, a.platform, b.candidate_id, f.fail_case, f.fail_label, f.fail_verdict, f.fail_message
FROM t b
JOIN t a ON a.method = b.method AND a.op = b.op AND a.platform <> b.platform AND NOT a.passed
LEFT JOIN kgb_candidate_outcomes f ON f.candidate_id = b.candidate_id AND f.platform = a.platform
WHERE b.platform = reference AND b.passed
ORDER BY b.method, b.op, a.platform
$$;
