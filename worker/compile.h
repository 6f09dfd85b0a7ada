/* Sandboxed compile children and the on-disk compile cache.
 *
 * Every compiler that reads candidate text (NVRTC, the Triton helper, and any later
 * front end) runs in a child process made by kgb_sandbox_run: a fresh private
 * temporary directory as its working directory, a clean environment (only what the
 * caller lists), RLIMIT_CPU / RLIMIT_AS / RLIMIT_NOFILE / RLIMIT_CORE, its own network
 * namespace where the kernel allows it (unshare(CLONE_NEWNET), else a user namespace
 * with one), its own process group, and a wall-time limit after which the whole group
 * is killed. The caller reads the files the child left in the directory, then releases
 * the result, which removes the directory.
 *
 * The cache lives in $KGB_CACHE_DIR/compile/<key>/ (default ~/.cache/kgb/compile). A
 * key is the SHA-256 of every input that can change the output: language, source,
 * defines, options, signature, target and toolchain version (kgb_ckey_*). An entry is
 * a directory of named files written atomically; a compile error is cached as well
 * (the file "error.log"), since it is as deterministic as a success. */
#ifndef KGB_COMPILE_H
#define KGB_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util.h"

typedef struct kgb_sandbox_opts {
	uint32_t wall_ms;         /* kill the child's process group after this (0: 120 s) */
	uint32_t cpu_s;           /* RLIMIT_CPU (0: wall_ms / 1000 + 1) */
	uint64_t as_bytes;        /* RLIMIT_AS (0: no limit) */
	uint32_t nofile;          /* RLIMIT_NOFILE (0: 256) */
	bool no_network;          /* try to unshare the network namespace */
	const char *const *env;   /* "NAME=value" list, NULL-terminated; NULL = empty env */
	const void *stdin_data;   /* written to the child's stdin (may be NULL) */
	size_t stdin_len;
} kgb_sandbox_opts_t;

typedef struct kgb_sandbox_result {
	char dir[512];            /* the private directory (removed by release) */
	int exit_code;            /* exit status, or -1 when killed by a signal */
	int signo;                /* the signal that ended it, or 0 */
	bool timed_out;           /* killed at the wall-time limit */
	bool net_isolated;        /* the network namespace was unshared */
	double wall_ms;
	char *output;             /* stdout + stderr of the child, bounded (64 KiB); owned */
	size_t output_len;
} kgb_sandbox_result_t;

/* Function run inside the child for an in-process compiler (no exec). It runs with
 * the child's working directory set to dir; it returns the child's exit code. */
typedef int (*kgb_sandbox_fn)(void *arg, const char *dir);

/* Run argv (argv[0] an absolute path: no PATH search) or, when argv is NULL, fn(arg)
 * in a sandboxed child, and wait for it (at most opts->wall_ms). Returns 0 when the
 * child ran (look at res->exit_code / timed_out / signo for how it ended) or -1 when
 * it could not be started, with err filled. Release res with kgb_sandbox_release. */
int kgb_sandbox_run(const kgb_sandbox_opts_t *opts, const char *const *argv, kgb_sandbox_fn fn,
                    void *arg, kgb_sandbox_result_t *res, char *err, size_t errlen);
void kgb_sandbox_release(kgb_sandbox_result_t *res);
/* Read file `name` from the child's directory (caller frees). NULL if absent. */
char *kgb_sandbox_read(const kgb_sandbox_result_t *res, const char *name, size_t *len);

/* ---- cache keys ---- */

typedef struct kgb_ckey {
	kgb_sha256_t sha;
} kgb_ckey_t;

void kgb_ckey_init(kgb_ckey_t *k);
/* Add one named field. Fields are length-prefixed, so ("ab","c") and ("a","bc") give
 * different keys; data may be NULL (an absent field, distinct from an empty one). */
void kgb_ckey_add(kgb_ckey_t *k, const char *field, const void *data, size_t len);
void kgb_ckey_add_str(kgb_ckey_t *k, const char *field, const char *s);
void kgb_ckey_add_int(kgb_ckey_t *k, const char *field, int64_t v);
void kgb_ckey_final(kgb_ckey_t *k, char hex[65]);

/* ---- cache entries ---- */

/* The cache directory ($KGB_CACHE_DIR/compile, or ~/.cache/kgb/compile), created on
 * demand. Static string. NULL when no directory can be used (caching is then off). */
const char *kgb_compile_cache_dir(void);
/* Read file `name` of entry `key` (caller frees). NULL when absent. */
char *kgb_compile_cache_get(const char *key, const char *name, size_t *len);
/* Store file `name` of entry `key` atomically. Returns 0 or -1 (a failed store only
 * costs a recompile later; the caller may ignore it). */
int kgb_compile_cache_put(const char *key, const char *name, const void *data, size_t len);

/* An exclusive lock on key's entry while one process makes it: the slots of a worker
 * starting jobs of one candidate at once would otherwise all compile the same kernel
 * side by side. The caller takes it after a miss, looks again, and compiles only if the
 * entry is still missing. Returns an fd for kgb_compile_cache_unlock, or -1 (no cache:
 * compile unlocked). A dead holder's lock goes with its process. */
int kgb_compile_cache_lock(const char *key);
void kgb_compile_cache_unlock(int fd);

#endif
