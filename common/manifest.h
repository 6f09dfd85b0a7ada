/* Campaign manifests (docs/candidate-format.md, "Manifests").
 *
 * A manifest as the user writes it names candidate plans and kernel sources by file
 * (relative to the manifest), URL, or inline. kgb_manifest_resolve reads every file
 * and fetches every URL, leaving a self-contained manifest that kgb_manifest_to_json
 * serialises for the coordinator, which parses it again with kgb_manifest_parse. */
#ifndef KGB_MANIFEST_H
#define KGB_MANIFEST_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct kgb_source {
	char *name;           /* as the plan refers to it */
	char *content;        /* NULL until resolved */
	size_t len;
	char *file;           /* where to read it (relative to the manifest), or NULL */
	char *url;            /* where to fetch it, or NULL */
} kgb_source_t;

typedef struct kgb_candidate {
	char *method;
	char *op;
	char *plan_json;      /* the plan, as compact JSON text (NULL until resolved) */
	char *plan_file;      /* where the plan came from, or NULL if inline */
	kgb_source_t *sources;
	size_t nsources;
	double tokens;        /* tokens the method spent producing this candidate */
	double gen_seconds;   /* wall time the method spent */
	char *origin;         /* "demo.json: methods[1].candidates[3]" for messages */
	char *plan_url;       /* where to fetch the plan, or NULL (added after plan_file) */
	char *cases_json;     /* the candidate's case selection ("cases": [indices] or
	                       * {"indices": [...], "where": {PARAM: VALUE | [VALUES]}}) as
	                       * compact JSON, or NULL: every case (added after plan_url) */
	/* samples and rounds (added after cases_json): a method may give several candidates
	 * for one operator, told apart by (round, sample) */
	uint32_t round;       /* "round": the generation round, 0 the first */
	uint32_t sample;      /* "sample": the sample within its round, 0 the first */
	char *model;          /* "model": the model that wrote it, or NULL (unnamed) */
	int64_t usage[5];     /* "usage" by kind (enum kgb_usage); -1: unknown */
} kgb_candidate_t;

/* The kinds of token usage a candidate records ("usage": {"input": N, ...}). tokens,
 * when the manifest does not give it, is the sum of the first four. */
enum kgb_usage { KGB_USAGE_INPUT, KGB_USAGE_OUTPUT, KGB_USAGE_CACHE_WRITE, KGB_USAGE_CACHE_READ,
                 KGB_USAGE_REASONING, KGB_USAGE_N };
/* "input", "output", "cache_write", "cache_read", "reasoning" */
extern const char *const kgb_usage_keys[KGB_USAGE_N];

typedef struct kgb_method {
	char *name;
	char *description;
} kgb_method_t;

typedef struct kgb_manifest {
	char *name;
	char **ops;           /* explicit operator names (after dataset expansion) */
	size_t nops;
	char *dataset;        /* dataset name given, or NULL */
	char **platforms;     /* NULL/0: every platform, including ones that join later */
	size_t nplatforms;
	uint64_t seed;              /* the campaign seed when seed_fixed, else 0: the
	                             * coordinator draws a secret one (docs/security.md) */
	bool seed_fixed;            /* "seed" given: public, for reproduction */
	uint32_t heldout;           /* held-out cases per candidate of an operator that has
	                             * them (0..KGB_HELDOUT_MAX, default KGB_HELDOUT_DEFAULT;
	                             * 0 turns them off) */
	uint32_t shard_size;        /* cases per job (default 32, 1..4096) */
	uint32_t time_limit_ms;     /* per job (default 120000) */
	uint32_t timing_budget_ms;  /* per timed case (default 500) */
	bool timing;                /* default true */
	int priority;               /* higher runs first (default 0) */
	char *baseline;             /* method name whose times are the speedup baseline */
	kgb_method_t *methods;
	size_t nmethods;
	kgb_candidate_t *candidates;
	size_t ncandidates;
	bool smoke;                 /* "cases": "smoke": only each operator's smoke subset
	                             * (kgb_op_smoke_case_count); default "all" (false) */
	bool aa;                    /* "aa": true: an A/A check; the baseline is timed a second
	                             * time, in jobs of its own, as method KGB_AA_METHOD(baseline)
	                             * (added by the coordinator's parse, never serialised) */
} kgb_manifest_t;

/* The longest campaign or method name, in bytes. */
#define KGB_NAME_MAX 256

/* The A/A replicate of method B is named "B-aa" (migration 0008's kgb_aa_method). */
#define KGB_AA_SUFFIX "-aa"

/* Parse a manifest. origin is the file name used in messages. Every error names the
 * origin, the JSON path and the offending value: "demo.json: methods[0].candidates[2].op:
 * unknown operator 'addd'". Operators are checked against the catalog; plans given
 * inline are parsed and checked against their operator (kgb_plan_check).
 * If require_resolved, every plan and source must be inline (the coordinator's form).
 * Returns 0 and *out (free with kgb_manifest_destroy), or -1. */
int kgb_manifest_parse(const char *json, size_t len, const char *origin, bool require_resolved,
                       kgb_manifest_t **out, char *err, size_t errlen);
void kgb_manifest_destroy(kgb_manifest_t **m);

/* Fetch callback for URLs: returns a heap buffer (caller frees) or NULL with err. */
typedef char *(*kgb_fetch_fn)(const char *url, size_t *len, char *err, size_t errlen);
/* Read every plan and source file (relative to basedir) and fetch every URL, then
 * parse and check every plan against its operator. Errors name the candidate's origin
 * and the file. Returns 0 or -1. */
int kgb_manifest_resolve(kgb_manifest_t *m, const char *basedir, kgb_fetch_fn fetch, char *err,
                         size_t errlen);
/* Flags of kgb_manifest_resolve_ex. */
#define KGB_MANIFEST_ALLOW_OUTSIDE 1u  /* plan and source files may resolve outside basedir */
/* kgb_manifest_resolve with flags. Without KGB_MANIFEST_ALLOW_OUTSIDE every plan and
 * source file must resolve (symbolic links followed) inside basedir: "../x", "/etc/x"
 * or a link pointing out is an error naming the candidate, the file and where it
 * leads. Files must be regular files (a FIFO or a device is refused without reading
 * it), and a candidate's plan and sources together at most KGB_MAX_CANDIDATE_BYTES. */
int kgb_manifest_resolve_ex(kgb_manifest_t *m, const char *basedir, kgb_fetch_fn fetch, unsigned flags, char *err,
                            size_t errlen);
/* The cases a candidate runs: with no selection every case 0..count-1 (count: the
 * operator's smoke subset when smoke, else all its cases), else the selected ones, in
 * ascending order. An index selects that case; "where" keeps the cases whose label
 * (kgb_case_t.label: "dtype=f16 shape=[33,65] layout=transposed") has PARAM=VALUE for
 * each PARAM (any of the VALUES of a list). Returns 0, *idx (caller frees) and *n > 0,
 * or -1 with err naming the candidate's origin, the field and the value (an index out
 * of range, a parameter no case has, a selection that keeps no case). */
int kgb_manifest_select_cases(const kgb_candidate_t *cd, bool smoke, uint32_t **idx, size_t *n, char *err,
                              size_t errlen);
/* True if some candidate of m has a case selection (the campaign is partial). */
bool kgb_manifest_is_partial(const kgb_manifest_t *m);

/* Serialise a resolved manifest as JSON (caller frees). */
char *kgb_manifest_to_json(const kgb_manifest_t *m);

#endif
