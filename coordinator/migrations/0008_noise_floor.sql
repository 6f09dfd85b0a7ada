-- The noise floor of each platform: how far two independent timings of the same
-- kernel (different jobs, executors and moments) lie apart, measured by kgb itself
-- from A/A campaigns, stored with when and from what it was measured, and taken into
-- every speedup's interval (docs/timing.md, "Run-to-run noise").

-- An A/A campaign (manifest "aa": true) times its baseline method a second time, in
-- jobs of its own, as the method '<baseline>-aa'.
CREATE FUNCTION kgb_aa_method(c campaigns) RETURNS text
	LANGUAGE sql IMMUTABLE AS
$$ SELECT CASE WHEN c.manifest->>'aa' = 'true' AND c.baseline IS NOT NULL THEN c.baseline || '-aa' END $$;

-- One measurement per A/A campaign and platform. d = ln(t1 / t2) for the two timings
-- of one case; an operator's D is the mean of its cases' d (what its speedup is made
-- of). The sums of squares are about zero, not about the mean: both timings are of the
-- same kernel, so any shift between them is noise too.
CREATE TABLE noise_floors (
	id          bigserial PRIMARY KEY,
	platform_id integer NOT NULL REFERENCES platforms (id),
	campaign_id bigint REFERENCES campaigns (id) ON DELETE SET NULL,
	method      text NOT NULL,            -- the method timed twice (the baseline)
	measured_at timestamptz NOT NULL DEFAULT now(),
	ops         integer NOT NULL CHECK (ops > 0),
	cases       integer NOT NULL CHECK (cases > 0),
	op_ss       float8 NOT NULL,          -- sum over operators of D^2
	case_ss     float8 NOT NULL,          -- sum over cases of d^2
	op_max      float8 NOT NULL,          -- the largest |D|
	case_max    float8 NOT NULL           -- the largest |d|
);
CREATE INDEX noise_floors_platform ON noise_floors (platform_id, measured_at DESC);

-- The lower 1% quantile of chi-square with n degrees of freedom (Wilson-Hilferty: below
-- the exact value, the safe side: by 17% at n = 4, 5% at n = 6, 1% from n = 12 on):
-- sqrt(ss / kgb_chi2_low(n)) is the one-sided 99% upper confidence bound on a standard
-- deviation estimated from n squares about a known mean.
CREATE FUNCTION kgb_chi2_low(n float8) RETURNS float8
	LANGUAGE sql IMMUTABLE AS
$$ SELECT greatest(n * (1 - 2 / (9 * n) - 2.3263479 * sqrt(2 / (9 * n))) ^ 3, 1e-3) $$;

-- Measure campaign cid's floor (nothing unless it is an A/A campaign): one row per
-- platform where the baseline and its replicate both passed some timed case.
CREATE FUNCTION kgb_measure_noise_floor(cid bigint) RETURNS integer
	LANGUAGE sql AS
$$
WITH k AS (SELECT id, baseline, kgb_aa_method(campaigns) AS aa FROM campaigns WHERE id = cid),
t AS (SELECT c.method, c.op, j.platform_id, r.case_index, r.median_ns
      FROM k JOIN candidates c ON c.campaign_id = k.id AND c.method IN (k.baseline, k.aa)
      JOIN jobs j ON j.candidate_id = c.id JOIN results r ON r.job_id = j.id
      WHERE r.verdict = 'pass' AND r.timed AND r.median_ns > 0),
d AS (SELECT a.platform_id, a.op, ln(a.median_ns / b.median_ns) AS d
      FROM k JOIN t a ON a.method = k.baseline
      JOIN t b ON b.method = k.aa AND b.op = a.op AND b.platform_id = a.platform_id
      AND b.case_index = a.case_index),
o AS (SELECT platform_id, op, avg(d) AS d, count(*) AS n, sum(d * d) AS ss, max(abs(d)) AS mx
      FROM d GROUP BY platform_id, op),
ins AS (INSERT INTO noise_floors (platform_id, campaign_id, method, ops, cases, op_ss, case_ss, op_max, case_max)
        SELECT o.platform_id, cid, k.baseline, count(*), sum(o.n), sum(o.d * o.d), sum(o.ss), max(abs(o.d)),
               max(o.mx)
        FROM o, k GROUP BY o.platform_id, k.baseline RETURNING 1)
SELECT count(*)::integer FROM ins
$$;

-- An A/A campaign measures its floor when it is done.
CREATE FUNCTION kgb_campaign_done_floor() RETURNS trigger
	LANGUAGE plpgsql AS
$$
BEGIN
	PERFORM kgb_measure_noise_floor(NEW.id);
	RETURN NEW;
END
$$;
CREATE TRIGGER campaigns_noise_floor AFTER UPDATE OF state ON campaigns
	FOR EACH ROW WHEN (NEW.state = 'done' AND OLD.state <> 'done' AND NEW.manifest->>'aa' = 'true'
	                   AND NEW.baseline IS NOT NULL)
	EXECUTE FUNCTION kgb_campaign_done_floor();

-- The floor a campaign's speedups on a platform are judged with: pooled over the
-- platform's last three measurements made by other campaigns (so an A/A campaign is
-- judged by a floor it did not measure), or, when there are none, the campaign's own.
-- op_floor and case_floor are the 99% upper confidence bounds of the standard deviation
-- of D and d (log scale); no row: the platform has no measurement yet.
CREATE FUNCTION kgb_noise_floor(plat integer, cid bigint)
	RETURNS TABLE (op_floor float8, case_floor float8, ops bigint, cases bigint, measured_at timestamptz,
	               campaigns text, own boolean)
	LANGUAGE sql STABLE AS
$$
WITH other AS (SELECT * FROM noise_floors f WHERE f.platform_id = plat AND f.campaign_id IS DISTINCT FROM cid
               ORDER BY f.measured_at DESC, f.id DESC LIMIT 3),
own AS (SELECT * FROM noise_floors f WHERE f.platform_id = plat AND f.campaign_id = cid
        AND NOT EXISTS (SELECT 1 FROM other) ORDER BY f.id DESC LIMIT 1),
u AS (SELECT *, false AS own FROM other UNION ALL SELECT *, true FROM own)
SELECT sqrt(sum(u.op_ss) / kgb_chi2_low(sum(u.ops))), sqrt(sum(u.case_ss) / kgb_chi2_low(sum(u.cases))),
       sum(u.ops), sum(u.cases), max(u.measured_at),
       string_agg(COALESCE(u.campaign_id::text, '?'), ',' ORDER BY u.campaign_id), bool_or(u.own)
FROM u HAVING count(*) > 0
$$;

-- The speedup views (migrations 0003, 0005) with the floor in their tie: the interval
-- is exp(+-2 sqrt(rse^2 + floor^2)); the floor used is the last column.
CREATE OR REPLACE VIEW kgb_case_speedups AS
SELECT m.campaign_id, m.method, b.method AS baseline, m.platform, m.op, m.case_index, m.label,
       b.median_ns / m.median_ns AS speedup,
       sqrt(coalesce(m.rse, 0) ^ 2 + coalesce(b.rse, 0) ^ 2) AS speedup_rse,
       abs(ln(b.median_ns / m.median_ns))
           <= 2 * sqrt(coalesce(m.rse, 0) ^ 2 + coalesce(b.rse, 0) ^ 2 + coalesce(f.case_floor, 0) ^ 2) AS tie,
       coalesce(f.case_floor, 0) AS noise_floor
FROM kgb_case_results m
JOIN campaigns c ON c.id = m.campaign_id AND c.baseline IS NOT NULL
JOIN kgb_case_results b ON b.campaign_id = m.campaign_id AND b.method = c.baseline
     AND b.platform = m.platform AND b.op = m.op AND b.case_index = m.case_index
JOIN platforms p ON p.name = m.platform
LEFT JOIN LATERAL kgb_noise_floor(p.id, m.campaign_id) f ON true
WHERE m.timed AND b.timed AND m.verdict = 'pass' AND b.verdict = 'pass'
  AND m.median_ns > 0 AND b.median_ns > 0 AND m.method <> c.baseline;

CREATE OR REPLACE VIEW kgb_operator_speedups AS
WITH s AS (
	SELECT campaign_id, method, baseline, platform, op, count(*) AS timed_cases,
	       exp(avg(ln(speedup))) AS speedup,
	       sqrt(sum(speedup_rse ^ 2)) / count(*) AS speedup_rse
	FROM kgb_case_speedups GROUP BY campaign_id, method, baseline, platform, op
),
w AS (SELECT s.*, coalesce(f.op_floor, 0) AS floor,
             sqrt(s.speedup_rse ^ 2 + coalesce(f.op_floor, 0) ^ 2) AS sigma
      FROM s JOIN platforms p ON p.name = s.platform
      LEFT JOIN LATERAL kgb_noise_floor(p.id, s.campaign_id) f ON true)
SELECT w.campaign_id, w.method, w.baseline, w.platform, w.op, w.timed_cases, w.speedup, w.speedup_rse,
       w.speedup * exp(-2 * w.sigma) AS speedup_low,
       w.speedup * exp(2 * w.sigma) AS speedup_high,
       abs(ln(w.speedup)) <= 2 * w.sigma AS tie,
       w.floor AS noise_floor
FROM w JOIN kgb_operator_results o USING (campaign_id, method, platform, op)
WHERE o.solved;
