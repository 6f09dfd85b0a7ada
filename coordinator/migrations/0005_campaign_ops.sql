-- Campaign owners and times, re-runs, case selections (partial campaigns), and the
-- views for speedups with their uncertainty (docs/store.md).

ALTER TABLE campaigns
	ADD COLUMN owner      text NOT NULL DEFAULT '',
	ADD COLUMN started_at timestamptz,
	ADD COLUMN partial    boolean NOT NULL DEFAULT false,
	ADD COLUMN parent_id  bigint REFERENCES campaigns (id) ON DELETE SET NULL;

-- A candidate restricted to some of its operator's cases: the selected case indices
-- (ascending) and the job shards over them ([[lo, hi], ...], each a run of consecutive
-- selected cases). NULL: every case, in shards of the campaign's shard_size.
ALTER TABLE candidates
	ADD COLUMN cases  jsonb,
	ADD COLUMN shards jsonb;

-- started_at: when the campaign's first job was assigned (state queued -> running).
CREATE FUNCTION kgb_campaign_started() RETURNS trigger
	LANGUAGE plpgsql AS
$$
BEGIN
	IF NEW.state <> 'queued' AND NEW.started_at IS NULL AND OLD.state = 'queued' AND NEW.state <> 'cancelled' THEN
		NEW.started_at := now();
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER campaigns_started BEFORE UPDATE OF state ON campaigns
	FOR EACH ROW EXECUTE FUNCTION kgb_campaign_started();
UPDATE campaigns c SET started_at = (SELECT min(assigned_at) FROM jobs j WHERE j.campaign_id = c.id)
	WHERE state <> 'queued';

-- One row per campaign: owner, times, job counts.
CREATE VIEW kgb_campaigns AS
SELECT c.id, c.name, c.owner, c.state, c.partial, c.parent_id, c.baseline, c.created_at, c.started_at,
       c.finished_at,
       count(j.id) AS jobs,
       count(j.id) FILTER (WHERE j.state = 'queued') AS queued,
       count(j.id) FILTER (WHERE j.state = 'running') AS running,
       count(j.id) FILTER (WHERE j.state = 'done') AS done,
       count(j.id) FILTER (WHERE j.state = 'failed') AS infra_failed,
       count(j.id) FILTER (WHERE j.state = 'cancelled') AS cancelled
FROM campaigns c LEFT JOIN jobs j ON j.campaign_id = c.id
GROUP BY c.id;

-- Per campaign, method, platform and operator: the geometric mean speedup over the
-- cases timed for both the method and the baseline, its relative standard error (the
-- standard error of the mean log speedup), and whether its two-standard-error interval
-- includes 1 (a tie). Only for operators the method solves (every case passes).
CREATE VIEW kgb_operator_speedups AS
WITH s AS (
	SELECT campaign_id, method, baseline, platform, op, count(*) AS timed_cases,
	       exp(avg(ln(speedup))) AS speedup,
	       sqrt(sum(speedup_rse ^ 2)) / count(*) AS speedup_rse
	FROM kgb_case_speedups GROUP BY campaign_id, method, baseline, platform, op
)
SELECT s.campaign_id, s.method, s.baseline, s.platform, s.op, s.timed_cases, s.speedup, s.speedup_rse,
       s.speedup * exp(-2 * s.speedup_rse) AS speedup_low,
       s.speedup * exp(2 * s.speedup_rse) AS speedup_high,
       abs(ln(s.speedup)) <= 2 * s.speedup_rse AS tie
FROM s JOIN kgb_operator_results o USING (campaign_id, method, platform, op)
WHERE o.solved;

-- kgb_method_summary, plus whether the campaign is partial (a case selection, which
-- never counts toward the benchmark's accuracy) and the operators whose speedup is a tie.
CREATE OR REPLACE VIEW kgb_method_summary AS
WITH op_speed AS (
	SELECT campaign_id, method, platform, op, exp(avg(ln(speedup))) AS speedup
	FROM kgb_case_speedups GROUP BY campaign_id, method, platform, op
)
SELECT o.campaign_id, o.method, o.platform,
       count(*) AS operators,
       count(*) FILTER (WHERE o.solved) AS solved,
       round(100.0 * count(*) FILTER (WHERE o.solved) / count(*), 1) AS accuracy_pct,
       exp(avg(ln(s.speedup)) FILTER (WHERE o.solved)) AS geomean_speedup,
       count(*) FILTER (WHERE o.solved AND s.speedup > 1) AS faster_ops,
       bool_or(k.partial) AS partial,
       count(*) FILTER (WHERE t.tie) AS tie_ops
FROM kgb_operator_results o
JOIN campaigns k ON k.id = o.campaign_id
LEFT JOIN op_speed s USING (campaign_id, method, platform, op)
LEFT JOIN kgb_operator_speedups t USING (campaign_id, method, platform, op)
GROUP BY o.campaign_id, o.method, o.platform;
