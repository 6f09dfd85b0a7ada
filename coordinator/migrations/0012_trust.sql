-- The store's cluster id, made once when the store is initialised (or upgraded to
-- this migration): the coordinator puts it in every message, and the CLI and the
-- workers check it, so that neither silently talks to another store's coordinator
-- (docs/security.md, "Which coordinator").
CREATE TABLE cluster (
	one        boolean PRIMARY KEY DEFAULT true CHECK (one),
	id         text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO cluster (id)
	VALUES (substr(md5(random()::text || clock_timestamp()::text || pg_backend_pid()::text), 1, 16));
