-- A worker's identity beyond its name: the process now registered under the name
-- (Register.session, random per process) and, with CURVE, the public key the name is
-- bound to (Z85; empty until a CURVE client registers it). See docs/security.md.
ALTER TABLE workers
	ADD COLUMN session   bytea,
	ADD COLUMN curve_key text NOT NULL DEFAULT '',
	ADD COLUMN address   text NOT NULL DEFAULT '';
