-- Secret campaign seeds and held-out cases (docs/security.md, "Foreknowledge").
--
-- campaigns.seed_kind says what campaigns.seed is:
--   legacy  a campaign submitted before this migration: seed is input set A's seed and
--           set B's is derived from it by the old public rule (what its jobs ran with);
--   fixed   the manifest's "seed" (public): sets A and B and the held-out key are keyed
--           hashes of it (kgb_seeds_derive);
--   secret  drawn by the coordinator from the kernel's CSPRNG; derived the same way, and
--           shown to clients only once the campaign is done or cancelled.
-- campaigns.heldout: held-out cases per candidate (the manifest's "heldout").
ALTER TABLE campaigns
	ADD COLUMN seed_kind text NOT NULL DEFAULT 'legacy'
		CHECK (seed_kind IN ('legacy', 'fixed', 'secret')),
	ADD COLUMN heldout   integer NOT NULL DEFAULT 0 CHECK (heldout >= 0);

-- candidates.heldout_lo: the first held-out case index (the operator's case count: the
-- held-out cases are heldout_lo .. heldout_lo + campaigns.heldout - 1, built from the
-- campaign's held-out key); NULL: the candidate has none.
ALTER TABLE candidates
	ADD COLUMN heldout_lo integer;
