/* Small shared helpers: error returns, always-on assertions, bounded strings, time. */
#ifndef KGB_UTIL_H
#define KGB_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sodium/crypto_hash_sha256.h> /* Debian: libsodium-dev */

#define KGB_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define KGB_MIN(a, b) ((a) < (b) ? (a) : (b))
#define KGB_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Always-on assertion: prints file, line and the expression, then aborts. Never
 * compiled out (unlike assert()). Use for broken invariants, not for bad input. */
#define KGB_ASSERT(cond)                                                        \
	do {                                                                        \
		if (!(cond))                                                            \
			kgb_assert_fail(__FILE__, __LINE__, #cond, NULL);                   \
	} while (0)
#define KGB_ASSERT_MSG(cond, ...)                                               \
	do {                                                                        \
		if (!(cond)) {                                                          \
			char kgb__m[256];                                                   \
			snprintf(kgb__m, sizeof kgb__m, __VA_ARGS__);                       \
			kgb_assert_fail(__FILE__, __LINE__, #cond, kgb__m);                 \
		}                                                                       \
	} while (0)
_Noreturn void kgb_assert_fail(const char *file, int line, const char *expr, const char *msg);

/* Write a formatted message into err (if err != NULL) and return -1:
 *   return kgb_err(err, errlen, "field %s: bad value '%s'", f, v);  */
int kgb_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* malloc/calloc/realloc/strdup that abort on exhaustion. */
void *kgb_xmalloc(size_t n);
void *kgb_xcalloc(size_t n, size_t size);
void *kgb_xrealloc(void *p, size_t n);
char *kgb_xstrdup(const char *s);
/* asprintf that aborts on exhaustion; caller frees. */
char *kgb_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Copy src into dst of size n, always NUL-terminated; returns strlen(src). */
size_t kgb_strlcpy(char *dst, const char *src, size_t n);

/* The last line of s (NULL: "") that is not empty once trailing newlines are cut:
 * its start, its length in *len (no newline). */
const char *kgb_last_line(const char *s, size_t *len);

/* Pass a file descriptor over a Unix socket (SCM_RIGHTS, one byte of payload).
 * kgb_fd_send: 0, or -1 with errno (flags as for sendmsg; MSG_NOSIGNAL is added).
 * kgb_fd_recv: blocks; the descriptor (close-on-exec), or -1 when the peer closed the
 * socket or sent none. */
int kgb_fd_send(int sock, int fd, int flags);
int kgb_fd_recv(int sock);

/* Monotonic clock in nanoseconds / milliseconds; wall clock in milliseconds. */
uint64_t kgb_now_ns(void);
double kgb_now_ms(void);
int64_t kgb_wall_ms(void);

/* Read a whole file into a NUL-terminated heap buffer (caller frees); *len gets the
 * size without the NUL. Returns NULL and fills err on failure. */
char *kgb_read_file(const char *path, size_t *len, char *err, size_t errlen);
/* Read a regular file of at most max bytes (NUL-terminated, *len its size). Anything
 * else is refused without blocking or reading it whole: a FIFO, a device, a socket, a
 * directory, or a file over max ("PATH: not a regular file (a FIFO)", "PATH: N bytes,
 * over the limit of M"). Returns NULL with err filled. */
char *kgb_read_regular_file(const char *path, size_t max, size_t *len, char *err, size_t errlen);
/* A ZeroMQ endpoint to connect to, from what a user typed: "host:port" (no scheme)
 * becomes "tcp://host:port"; anything with a scheme is kept. Heap string. */
char *kgb_endpoint_for_connect(const char *s);
/* A comma-separated list of coordinator endpoints (the active one and its standbys),
 * each as kgb_endpoint_for_connect makes it, blanks around the commas ignored, empty
 * items skipped. Returns how many (at least 1: s itself when it names none) in *out, a
 * heap array of heap strings (free with kgb_endpoint_list_free). */
size_t kgb_endpoint_list(const char *s, char ***out);
void kgb_endpoint_list_free(char **v, size_t n);
/* name if it contains a slash (and is executable), else the first executable regular
 * file of that name in $PATH (default /usr/local/bin:/usr/bin:/bin), made absolute
 * against the working directory (children run elsewhere). Heap string or NULL. Not
 * resolved through links: a virtual environment's python keeps its name. */
char *kgb_find_program(const char *name);
/* A file kgb ships beside its binaries (a helper script, a library, a package):
 * $env_var when set (NULL when that file is not readable), else the first of rel[]
 * (paths relative to the directory of the running binary: a build tree, a bundle, an
 * installed prefix) that is readable, resolved. Heap string or NULL. env_var may be
 * NULL. */
char *kgb_find_near_exe(const char *env_var, const char *const *rel, size_t nrel);
/* The environment of a sandboxed Python child, NULL-terminated (free each string, then
 * the array): PATH with the interpreter's own directory first, PYTHONPATH when
 * pythonpath is set, LANG=C.UTF-8, no bytecode written, HOME that does not exist; then
 * every variable of pass[] that is set here, and extra[] ("NAME=value") as given. */
char **kgb_python_env(const char *python, const char *pythonpath, const char *const *pass, size_t npass,
                      const char *const *extra, size_t nextra);
/* Where the Triton helper (triton_compile.py) lies relative to a kgb binary: beside it
 * (a bundle), in the prefix's libexec, in the source tree of a build. */
extern const char *const kgb_triton_helper_rel[];
#define KGB_TRITON_HELPER_NREL 4

/* All n bytes of buf to fd, a write interrupted by a signal retried. 0, or -1 with errno
 * set (EIO when a write took nothing). */
int kgb_write_all(int fd, const void *buf, size_t n);
/* Write buf to path atomically (temp file + rename). Returns 0 or -1 with errno set. */
int kgb_write_file_atomic(const char *path, const void *buf, size_t len);
/* mkdir -p. Returns 0 or -1 with errno set. */
int kgb_mkdirs(const char *path, int mode);

/* rm -rf: removes path and everything below it (links not followed); errors ignored. */
void kgb_rmtree(const char *path);

/* SHA-256 (libsodium's, which every binary has through libzmq) of data, written as 64
 * lowercase hex digits + NUL into hex[65]. */
void kgb_sha256_hex(const void *data, size_t len, char hex[65]);
/* An incremental SHA-256: init, update any number of times, final_hex once. */
typedef struct kgb_sha256 { crypto_hash_sha256_state st; } kgb_sha256_t;
void kgb_sha256_init(kgb_sha256_t *s);
void kgb_sha256_update(kgb_sha256_t *s, const void *data, size_t len);
void kgb_sha256_final_hex(kgb_sha256_t *s, char hex[65]);

/* splitmix64-seeded xoshiro256** generator: deterministic across platforms. */
typedef struct kgb_rng { uint64_t s[4]; } kgb_rng_t;
void kgb_rng_seed(kgb_rng_t *r, uint64_t seed);
uint64_t kgb_rng_next(kgb_rng_t *r);
double kgb_rng_uniform(kgb_rng_t *r);            /* [0, 1) */
double kgb_rng_normal(kgb_rng_t *r);             /* N(0, 1) */
uint64_t kgb_hash64(const void *data, size_t len, uint64_t seed); /* FNV-1a mixed */

/* A campaign's seeds (docs/security.md, "Secret seeds"): from the campaign seed, the
 * seed of input set A, the seed of input set B and the key of the held-out cases, each
 * a keyed hash (SHA-256 of the seed and a label, 63 bits, never 0). None is derivable
 * from another without the campaign seed. */
typedef struct kgb_seeds { uint64_t a, b, heldout; } kgb_seeds_t;
kgb_seeds_t kgb_seeds_derive(uint64_t campaign_seed);
/* A secret campaign seed from the kernel's CSPRNG (getrandom): 63 bits. Aborts if the
 * kernel cannot give one. */
uint64_t kgb_seed_secret(void);

#endif
