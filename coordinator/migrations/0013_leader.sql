-- One active coordinator per store (docs/scheduler.md, "Standby coordinator").
--
-- coord_leader is one row: the leader epoch, which coordinator holds it and until when
-- (the store's clock). The active coordinator renews the lease; a standby takes it
-- over (kgb_leader_take) once it has run out, bumping the epoch. Every statement that
-- writes jobs, results, campaigns, candidates, workers, devices or platforms runs the
-- fence trigger: a session that says which epoch it writes under (the setting
-- kgb.epoch, which the coordinator sets on its connection) is refused once that epoch
-- is not the store's, so a coordinator that was paused and comes back after a
-- takeover writes nothing. Sessions without the setting (psql, other tools) are let
-- through.
CREATE TABLE coord_leader (
	one             boolean PRIMARY KEY DEFAULT true CHECK (one),
	epoch           bigint NOT NULL DEFAULT 0,
	holder          text NOT NULL DEFAULT '',   -- the coordinator's name
	app             text NOT NULL DEFAULT '',   -- application_name of its sessions
	worker_endpoint text NOT NULL DEFAULT '',
	cli_endpoint    text NOT NULL DEFAULT '',
	lease_until     timestamptz NOT NULL DEFAULT '-infinity',
	since           timestamptz
);
INSERT INTO coord_leader DEFAULT VALUES;

-- The writers' side: a transaction share-locks the leader (advisory lock 4242017013)
-- and checks its epoch; a takeover takes that lock exclusively, so it waits for the
-- old holder's writing transactions to end, and every later one sees the new epoch.
CREATE FUNCTION kgb_fence() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	mine text := current_setting('kgb.epoch', true);
	cur bigint;
BEGIN
	IF mine IS NULL OR mine = '' THEN
		RETURN NULL;
	END IF;
	PERFORM pg_advisory_xact_lock_shared(4242017013);
	SELECT epoch INTO cur FROM coord_leader;
	IF cur IS DISTINCT FROM mine::bigint THEN
		RAISE EXCEPTION 'kgb fenced: this coordinator writes under leader epoch %, the store''s is % (another coordinator took over)', mine, cur
			USING ERRCODE = 'KGBF0';
	END IF;
	RETURN NULL;
END $$;

DO $$
DECLARE t text;
BEGIN
	FOREACH t IN ARRAY ARRAY['jobs', 'results', 'campaigns', 'candidates', 'workers', 'devices', 'platforms'] LOOP
		EXECUTE format('CREATE TRIGGER kgb_fence BEFORE INSERT OR UPDATE OR DELETE ON %I '
		               'FOR EACH STATEMENT EXECUTE FUNCTION kgb_fence()', t);
	END LOOP;
END $$;

-- A standby's try: the lead is taken when the lease ran out, when it is this
-- coordinator's own name coming back (its process restarted on the same host and
-- endpoint), or when forced (an embedded store has no other coordinator). The old
-- holder's sessions are ended first, so that none of its transactions stays open
-- (a paused process's connection holds its locks), then its writing transactions are
-- waited for. Returns the row as it is now and whether this call took it.
CREATE FUNCTION kgb_leader_take(p_holder text, p_app text, p_wep text, p_cep text, p_lease_ms int, p_force boolean)
RETURNS TABLE (epoch bigint, holder text, worker_endpoint text, cli_endpoint text, taken boolean)
LANGUAGE plpgsql AS $$
DECLARE
	r coord_leader%ROWTYPE;
BEGIN
	SELECT * INTO r FROM coord_leader;
	IF NOT p_force AND r.holder <> p_holder AND r.lease_until > clock_timestamp() THEN
		RETURN QUERY SELECT r.epoch, r.holder, r.worker_endpoint, r.cli_endpoint, false;
		RETURN;
	END IF;
	IF r.app <> '' AND r.app <> p_app THEN
		PERFORM pg_terminate_backend(a.pid) FROM pg_stat_activity a
			WHERE a.application_name = r.app AND a.pid <> pg_backend_pid();
	END IF;
	PERFORM pg_advisory_xact_lock(4242017013);
	UPDATE coord_leader l SET epoch = l.epoch + 1, holder = p_holder, app = p_app, worker_endpoint = p_wep,
		cli_endpoint = p_cep, lease_until = clock_timestamp() + p_lease_ms * interval '1 millisecond', since = now()
		WHERE p_force OR l.holder = p_holder OR l.lease_until <= clock_timestamp()
		RETURNING * INTO r;
	IF FOUND THEN
		RETURN QUERY SELECT r.epoch, r.holder, r.worker_endpoint, r.cli_endpoint, true;
		RETURN;
	END IF;
	RETURN QUERY SELECT l.epoch, l.holder, l.worker_endpoint, l.cli_endpoint, false FROM coord_leader l;
END $$;
