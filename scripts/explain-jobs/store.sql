-- a store with a finished 250k-job campaign (history) and a 250k-job campaign in progress
INSERT INTO platforms (name, backend, device_name) VALUES ('sim:a', 'sim', 'a'), ('sim:b', 'sim', 'b');
INSERT INTO campaigns (name, state, seed, shard_size, time_limit_ms, timing_budget_ms, manifest)
VALUES ('old', 'done', 1, 1, 1000, 1000, '{}'), ('big', 'running', 1, 1, 1000, 1000, '{}');
INSERT INTO candidates (campaign_id, idx, method, op, case_count, plan)
SELECT k, i, 'm' || i, 'add', 1250, '{}' FROM generate_series(1, 2) k, generate_series(0, 99) i;
-- 100 candidates x 1250 cases x 2 platforms = 250k jobs per campaign
INSERT INTO jobs (campaign_id, candidate_id, platform_id, op, case_lo, case_hi)
SELECT c.campaign_id, c.id, p, 'add', g, g + 1 FROM candidates c, generate_series(1, 2) p, generate_series(0, 1249) g
ORDER BY c.campaign_id, c.id, p, g;
UPDATE jobs SET state = 'done', finished_at = now() WHERE campaign_id = 1;
-- the running campaign: the first 100k done, 1000 running, the rest queued
UPDATE jobs SET state = 'done', finished_at = now(), epoch = 1, attempts = 1
 WHERE campaign_id = 2 AND id < (SELECT min(id) FROM jobs WHERE campaign_id = 2) + 100000;
UPDATE jobs SET state = 'running', epoch = 1, attempts = 1, assigned_at = now()
 WHERE campaign_id = 2 AND id >= (SELECT min(id) FROM jobs WHERE campaign_id = 2) + 100000
   AND id < (SELECT min(id) FROM jobs WHERE campaign_id = 2) + 101000;
-- history: 50 finished campaigns of 5,000 jobs each
INSERT INTO campaigns (name, state, seed, shard_size, time_limit_ms, timing_budget_ms, manifest)
SELECT 'h' || g, 'done', 1, 1, 1000, 1000, '{}' FROM generate_series(1, 50) g;
INSERT INTO candidates (campaign_id, idx, method, op, case_count, plan)
SELECT k.id, 0, 'm', 'add', 2500, '{}' FROM campaigns k WHERE k.name LIKE 'h%';
INSERT INTO jobs (campaign_id, candidate_id, platform_id, op, case_lo, case_hi, state, finished_at)
SELECT c.campaign_id, c.id, p, 'add', g, g + 1, 'done', now() FROM candidates c, generate_series(1, 2) p, generate_series(0, 2499) g
WHERE c.method = 'm' ORDER BY c.campaign_id, p, g;
VACUUM ANALYZE;
