-- Samples and rounds (docs/candidate-format.md, "Samples, rounds and usage"): a method
-- may give several candidates for one operator, told apart by round (the generation
-- round; a round regenerates what failed before) and sample (independent samples of
-- one round), with the model that wrote each and its token usage by kind.
--
-- The usage columns are NULL where the manifest did not say (unknown, not zero).
-- tokens stays the total: the manifest's "tokens", or, when only "usage" is given,
-- input + output + cache_write + cache_read (reasoning tokens are part of output).
ALTER TABLE candidates
	ADD COLUMN round              integer NOT NULL DEFAULT 0 CHECK (round >= 0),
	ADD COLUMN sample             integer NOT NULL DEFAULT 0 CHECK (sample >= 0),
	ADD COLUMN model              text NOT NULL DEFAULT '',
	ADD COLUMN input_tokens       bigint CHECK (input_tokens >= 0),
	ADD COLUMN output_tokens      bigint CHECK (output_tokens >= 0),
	ADD COLUMN cache_write_tokens bigint CHECK (cache_write_tokens >= 0),
	ADD COLUMN cache_read_tokens  bigint CHECK (cache_read_tokens >= 0),
	ADD COLUMN reasoning_tokens   bigint CHECK (reasoning_tokens >= 0);
