SET plan_cache_mode = force_generic_plan;
\echo == start-up load of the open jobs (load.c)
PREPARE l1(bigint) AS SELECT id, campaign_id, candidate_id, platform_id, case_lo, case_hi, state, epoch, attempts,
 COALESCE(worker_id, 0), GREATEST(0, COALESCE(EXTRACT(EPOCH FROM (not_before - now())) * 1000, 0))::float8
 FROM jobs WHERE is_open AND ($1::bigint IS NULL OR campaign_id = $1) ORDER BY id;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) EXECUTE l1(NULL);
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) EXECUTE l1(2);
\echo == a page of a submitted campaign (load.c)
PREPARE l2(bigint, bigint, bigint) AS SELECT id, campaign_id, candidate_id, platform_id, case_lo, case_hi, state, epoch, attempts,
 COALESCE(worker_id, 0), GREATEST(0, COALESCE(EXTRACT(EPOCH FROM (not_before - now())) * 1000, 0))::float8
 FROM jobs WHERE id BETWEEN $2::bigint AND $3::bigint AND campaign_id = $1::bigint AND is_open ORDER BY id;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) EXECUTE l2(2, 350001, 355000);
\echo == unfinished cancels (load.c)
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) SELECT DISTINCT j.campaign_id FROM jobs j JOIN campaigns k ON k.id = j.campaign_id
 WHERE j.is_open AND k.state = 'cancelled';
\echo == completion check (state.c)
BEGIN;
PREPARE d1(bigint) AS UPDATE campaigns SET state = 'done', finished_at = now()
 WHERE id = $1 AND state IN ('queued', 'running')
 AND NOT EXISTS (SELECT 1 FROM jobs WHERE campaign_id = $1 AND is_open) RETURNING id;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) EXECUTE d1(2);
ROLLBACK;
\echo == cancel of some platforms (cproto.c)
BEGIN;
PREPARE c1(bigint, text) AS WITH j AS (UPDATE jobs SET state = 'cancelled', finished_at = now(), worker_id = NULL
 WHERE campaign_id = $1 AND is_open AND platform_id IN (SELECT value::int FROM jsonb_array_elements_text($2::jsonb))
 RETURNING platform_id) SELECT p.id, p.name, count(*) FROM j JOIN platforms p ON p.id = j.platform_id GROUP BY p.id, p.name ORDER BY p.name;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) EXECUTE c1(2, '[2]');
ROLLBACK;
\echo == cancel sweep (state.c)
BEGIN;
PREPARE c2(bigint) AS WITH u AS (UPDATE jobs SET state = 'cancelled', finished_at = now(), worker_id = NULL
 WHERE campaign_id = $1 AND is_open RETURNING 1) SELECT count(*) FROM u;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) EXECUTE c2(2);
ROLLBACK;
\echo == cancel slice (state.c)
BEGIN;
PREPARE c3(bigint, bigint[]) AS WITH u AS (UPDATE jobs SET state = 'cancelled', finished_at = now(), worker_id = NULL
 WHERE id = ANY ($2::bigint[]) AND campaign_id = $1 AND is_open RETURNING 1) SELECT count(*) FROM u;
SELECT array_agg(g)::text AS ids FROM generate_series(400001, 405000) g \gset
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) EXECUTE c3(2, :'ids');
ROLLBACK;
\echo == status (cproto.c)
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT k.id, p.name, count(j.id) FILTER (WHERE j.state = 'queued'), count(j.id) FILTER (WHERE j.state = 'running'),
 count(j.id) FILTER (WHERE j.state = 'done'), count(j.id)
 FROM campaigns k LEFT JOIN jobs j ON j.campaign_id = k.id LEFT JOIN platforms p ON p.id = j.platform_id
 WHERE k.id = 2 GROUP BY k.id, p.id, p.name ORDER BY k.id, p.name;
\echo == assignment (state.c), one batch of 100
BEGIN;
PREPARE a1(bigint[], bigint[], int[], int[]) AS WITH i AS (SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::int[])
 WITH ORDINALITY AS i(id, wid, dev, need, ord)),
 u AS (UPDATE jobs SET state = 'running', epoch = epoch + 1, attempts = attempts + 1,
 worker_id = NULL, device_idx = i.dev, assigned_at = now(), not_before = NULL
 FROM i WHERE jobs.id = i.id AND jobs.state = 'queued' RETURNING i.ord, jobs.epoch, jobs.attempts, jobs.candidate_id, jobs.campaign_id, i.need)
 SELECT u.ord, u.epoch FROM u;
SELECT array_agg(g)::text AS ids, array_fill(NULL::bigint, ARRAY[100])::text AS w, array_fill(0, ARRAY[100])::text AS z FROM generate_series(402001, 402100) g \gset
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) EXECUTE a1(:'ids', :'w', :'z', :'z');
ROLLBACK;
SELECT pg_size_pretty(pg_relation_size('jobs')) AS jobs_heap, pg_size_pretty(pg_indexes_size('jobs')) AS jobs_indexes;
SELECT indexrelname, pg_size_pretty(pg_relation_size(indexrelid)) FROM pg_stat_user_indexes WHERE relname = 'jobs';
