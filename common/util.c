/* Small shared helpers: errors, allocation, strings, clocks, files, SHA-256, RNG. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <sodium/utils.h>

/* Print where the invariant broke and abort. Never returns. */
_Noreturn void kgb_assert_fail(const char *file, int line, const char *expr, const char *msg)
{
	fprintf(stderr, "%s:%d: assertion failed: %s%s%s\n", file, line, expr, msg ? ": " : "",
	        msg ? msg : "");
	fflush(stderr);
	abort();
}

/* Format into err (when given) and return -1. */
int kgb_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static _Noreturn void oom(size_t n)
{
	fprintf(stderr, "kgb: out of memory allocating %zu bytes\n", n);
	abort();
}

/* malloc that aborts on exhaustion; a zero size still returns a unique pointer. */
void *kgb_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

/* calloc that aborts on exhaustion or on n * size overflow. */
void *kgb_xcalloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		oom(SIZE_MAX);
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

/* realloc that aborts on exhaustion. */
void *kgb_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

/* strdup that aborts on exhaustion; NULL gives NULL. */
char *kgb_xstrdup(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *d = kgb_xmalloc(n);
	memcpy(d, s, n);
	return d;
}

/* asprintf that aborts on exhaustion; caller frees. */
char *kgb_xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	KGB_ASSERT(n >= 0);
	char *s = kgb_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* Bounded copy, always terminated when n > 0; returns strlen(src). */
size_t kgb_strlcpy(char *dst, const char *src, size_t n)
{
	size_t len = strlen(src);
	if (n > 0) {
		size_t c = len < n - 1 ? len : n - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return len;
}

/* See util.h. */
const char *kgb_last_line(const char *s, size_t *len)
{
	const char *o = s ? s : "";
	size_t ol = strlen(o);
	while (ol > 0 && (o[ol - 1] == '\n' || o[ol - 1] == '\r'))
		ol--;
	size_t b = ol;
	while (b > 0 && o[b - 1] != '\n')
		b--;
	*len = ol - b;
	return o + b;
}

/* Monotonic nanoseconds. */
uint64_t kgb_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Monotonic milliseconds as a double. */
double kgb_now_ms(void)
{
	return (double)kgb_now_ns() / 1e6;
}

/* Wall-clock milliseconds since the Unix epoch. */
int64_t kgb_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read fd (path names it in errors) to its end into a NUL-terminated buffer of at first
 * cap bytes, failing past max bytes; closes fd. Caller frees; NULL and err on failure. */
static char *read_to_end(int fd, const char *path, size_t cap, size_t max, size_t *len, char *err, size_t errlen)
{
	size_t n = 0;
	char *buf = kgb_xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			/* it grew while we read: never past max */
			if (cap > max) {
				kgb_err(err, errlen, "%s: more than the limit of %zu bytes", path, max);
				goto fail;
			}
			cap = KGB_MIN(cap * 2, max + 1);
			buf = kgb_xrealloc(buf, cap + 1);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			kgb_err(err, errlen, "%s: read: %s", path, strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n > max) {
		kgb_err(err, errlen, "%s: more than the limit of %zu bytes", path, max);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

/* Read a whole file; caller frees. NULL and err on failure. */
char *kgb_read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kgb_err(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		kgb_err(err, errlen, "%s: is a directory", path);
		close(fd);
		return NULL;
	}
	size_t cap = (st.st_size > 0 ? (size_t)st.st_size : 4096) + 1;
	return read_to_end(fd, path, cap, SIZE_MAX / 2, len, err, errlen);
}

static const char *file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a plain file";
}

char *kgb_read_regular_file(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
	/* O_NONBLOCK: opening a FIFO with no writer must not hang */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		kgb_err(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		kgb_err(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		kgb_err(err, errlen, "%s: not a regular file (%s)", path, file_kind(st.st_mode));
		close(fd);
		return NULL;
	}
	if ((uint64_t)st.st_size > (uint64_t)max) {
		kgb_err(err, errlen, "%s: %lld bytes, over the limit of %zu", path, (long long)st.st_size, max);
		close(fd);
		return NULL;
	}
	return read_to_end(fd, path, (size_t)st.st_size + 1, max, len, err, errlen);
}

char *kgb_endpoint_for_connect(const char *s)
{
	if (strstr(s, "://") || !strchr(s, ':'))
		return kgb_xstrdup(s);
	return kgb_xasprintf("tcp://%s", s);
}

size_t kgb_endpoint_list(const char *s, char ***out)
{
	size_t n = 0;
	char **v = kgb_xcalloc(strlen(s) / 2 + 2, sizeof *v);
	for (const char *p = s; *p;) {
		size_t len = strcspn(p, ",");
		const char *a = p, *b = p + len;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (b > a) {
			char *one = kgb_xasprintf("%.*s", (int)(b - a), a);
			v[n++] = kgb_endpoint_for_connect(one);
			free(one);
		}
		p += len + (p[len] == ',');
	}
	if (n == 0)
		v[n++] = kgb_endpoint_for_connect(s);
	*out = v;
	return n;
}

void kgb_endpoint_list_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int kgb_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Write via a temporary file in the same directory, fsync, then rename. */
int kgb_write_file_atomic(const char *path, const void *buf, size_t len)
{
	char *tmp = kgb_xasprintf("%s.tmp.%ld", path, (long)getpid());
	int rc = -1, saved = 0;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		saved = errno;
		goto out;
	}
	if (kgb_write_all(fd, buf, len) != 0) {
		saved = errno;
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		saved = errno;
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) != 0) {
		saved = errno;
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	free(tmp);
	if (rc != 0)
		errno = saved;
	return rc;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void kgb_rmtree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* mkdir -p: creates every missing component; existing directories are fine. */
int kgb_mkdirs(const char *path, int mode)
{
	if (!path || !*path) {
		errno = EINVAL;
		return -1;
	}
	char *p = kgb_xstrdup(path);
	int rc = 0;
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	for (char *s = p + 1;; s++) {
		bool end = *s == '\0';
		if (*s == '/' || end) {
			char c = *s;
			*s = '\0';
			if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST) {
				rc = -1;
				break;
			}
			struct stat st;
			if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
				errno = ENOTDIR;
				rc = -1;
				break;
			}
			*s = c;
		}
		if (end)
			break;
	}
	int saved = errno;
	free(p);
	errno = saved;
	return rc;
}

/* ---- SHA-256 (libsodium) ----
 * libsodium's SHA-256 and its hex and base64 codecs are plain functions with one
 * implementation and no global state: they need no sodium_init(), which would pick
 * CPU-specific code for other primitives and seed the random generator (an open
 * /dev/urandom on kernels without getrandom) in every process that hashes. */

/* Start a SHA-256 computation. */
void kgb_sha256_init(kgb_sha256_t *s)
{
	crypto_hash_sha256_init(&s->st);
}

/* Feed len bytes. */
void kgb_sha256_update(kgb_sha256_t *s, const void *data, size_t len)
{
	crypto_hash_sha256_update(&s->st, data, len);
}

/* Finish and write the digest as 64 lowercase hex digits. */
void kgb_sha256_final_hex(kgb_sha256_t *s, char hex[65])
{
	unsigned char digest[crypto_hash_sha256_BYTES];
	crypto_hash_sha256_final(&s->st, digest);
	sodium_bin2hex(hex, 65, digest, sizeof digest);
}

/* One-shot SHA-256 as hex. */
void kgb_sha256_hex(const void *data, size_t len, char hex[65])
{
	kgb_sha256_t s;
	kgb_sha256_init(&s);
	kgb_sha256_update(&s, data, len);
	kgb_sha256_final_hex(&s, hex);
}

/* ---- random numbers: xoshiro256** seeded through splitmix64 ---- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* Seed the four state words from splitmix64(seed); never all zero. */
void kgb_rng_seed(kgb_rng_t *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
	if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
		r->s[0] = 1;
}

/* Next 64 random bits. */
uint64_t kgb_rng_next(kgb_rng_t *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl64(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl64(s[3], 45);
	return result;
}

/* Uniform double on [0, 1) from the top 53 bits. */
double kgb_rng_uniform(kgb_rng_t *r)
{
	return (double)(kgb_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Standard normal by Box-Muller (one value per call; the pair's second half is
 * dropped so the sequence depends only on the generator state). */
double kgb_rng_normal(kgb_rng_t *r)
{
	double u1 = 1.0 - kgb_rng_uniform(r); /* (0, 1]: log is finite */
	double u2 = kgb_rng_uniform(r);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* FNV-1a over the bytes, started from seed, with a final avalanche mix. */
uint64_t kgb_hash64(const void *data, size_t len, uint64_t seed)
{
	const uint8_t *p = data;
	uint64_t h = 0xcbf29ce484222325ull ^ seed;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static uint64_t seed_keyed(uint64_t key, const char *label)
{
	kgb_sha256_t h;
	uint8_t k[8];
	char hex[65];
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		k[i] = (uint8_t)(key >> (8 * i));
	kgb_sha256_init(&h);
	kgb_sha256_update(&h, "kgb campaign seed", 17);
	kgb_sha256_update(&h, k, sizeof k);
	kgb_sha256_update(&h, label, strlen(label));
	kgb_sha256_final_hex(&h, hex);
	for (int i = 0; i < 16; i++)
		v = v << 4 | (uint64_t)(hex[i] <= '9' ? hex[i] - '0' : hex[i] - 'a' + 10);
	v &= INT64_MAX;
	return v ? v : 1;
}

kgb_seeds_t kgb_seeds_derive(uint64_t campaign_seed)
{
	kgb_seeds_t s = {
		.a = seed_keyed(campaign_seed, "input set A"),
		.b = seed_keyed(campaign_seed, "input set B"),
		.heldout = seed_keyed(campaign_seed, "held-out cases"),
	};
	return s;
}

uint64_t kgb_seed_secret(void)
{
	uint64_t v = 0;
	size_t got = 0;
	while (got < sizeof v) {
		ssize_t n = getrandom((char *)&v + got, sizeof v - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		KGB_ASSERT_MSG(n > 0, "getrandom: %s", strerror(errno));
		got += (size_t)n;
	}
	return v & INT64_MAX;
}

/* path made absolute against the working directory, links kept (a virtual
 * environment's python must keep its name, so no realpath). Heap string. */
static char *absolute_path(const char *path)
{
	char cwd[PATH_MAX];
	if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
		return kgb_xstrdup(path);
	return kgb_xasprintf("%s/%s", cwd, path);
}

/* See util.h. */
char *kgb_find_program(const char *name)
{
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? absolute_path(name) : NULL;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	const char *p = path;
	while (*p) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (n > 0 && n < 900) {
			char cand[1024];
			snprintf(cand, sizeof cand, "%.*s/%s", (int)n, p, name);
			struct stat st;
			if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
				return absolute_path(cand);
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return NULL;
}

const char *const kgb_triton_helper_rel[KGB_TRITON_HELPER_NREL] = {
	"triton_compile.py", "../libexec/kgb/triton_compile.py", "../../../worker/triton_compile.py",
	"../../worker/triton_compile.py"
};

/* See util.h. */
char **kgb_python_env(const char *python, const char *pythonpath, const char *const *pass, size_t npass,
                      const char *const *extra, size_t nextra)
{
	char **env = kgb_xcalloc(npass + nextra + 6, sizeof *env);
	size_t n = 0;
	char pydir[PATH_MAX];
	kgb_strlcpy(pydir, python, sizeof pydir);
	char *s = strrchr(pydir, '/');
	if (s) {
		*s = 0;
		env[n++] = kgb_xasprintf("PATH=%s:/usr/local/bin:/usr/bin:/bin", pydir);
	} else {
		env[n++] = kgb_xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");  /* a bare name: the usual places */
	}
	if (pythonpath && *pythonpath)
		env[n++] = kgb_xasprintf("PYTHONPATH=%s", pythonpath);
	env[n++] = kgb_xstrdup("LANG=C.UTF-8");
	env[n++] = kgb_xstrdup("PYTHONDONTWRITEBYTECODE=1");
	env[n++] = kgb_xstrdup("HOME=/nonexistent");
	for (size_t i = 0; i < npass; i++) {
		const char *v = getenv(pass[i]);
		if (v)
			env[n++] = kgb_xasprintf("%s=%s", pass[i], v);
	}
	for (size_t i = 0; i < nextra; i++)
		env[n++] = kgb_xstrdup(extra[i]);
	env[n] = NULL;
	return env;
}

/* See util.h. */
char *kgb_find_near_exe(const char *env_var, const char *const *rel, size_t nrel)
{
	const char *env = env_var ? getenv(env_var) : NULL;
	if (env && *env)
		return access(env, R_OK) == 0 ? kgb_xstrdup(env) : NULL;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	for (size_t i = 0; i < nrel; i++) {
		char p[PATH_MAX + 128];
		snprintf(p, sizeof p, "%s/%s", exe, rel[i]);
		if (access(p, R_OK) == 0) {
			char *r = realpath(p, NULL);
			return r ? r : kgb_xstrdup(p);
		}
	}
	return NULL;
}

/* One byte carrying one descriptor: the message both ends of kgb_fd_* use. */
typedef struct fdmsg {
	char byte;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh;
} fdmsg_t;

static void fdmsg_init(fdmsg_t *m)
{
	memset(m, 0, sizeof *m);
	m->byte = 'F';
	m->iov.iov_base = &m->byte;
	m->iov.iov_len = 1;
	m->mh.msg_iov = &m->iov;
	m->mh.msg_iovlen = 1;
	m->mh.msg_control = m->u.buf;
	m->mh.msg_controllen = sizeof m->u.buf;
}

int kgb_fd_send(int sock, int fd, int flags)
{
	fdmsg_t m;
	fdmsg_init(&m);
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m.mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof fd);
	ssize_t n;
	do
		n = sendmsg(sock, &m.mh, flags | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		return 0;
	if (n >= 0)
		errno = EIO;
	return -1;
}

int kgb_fd_recv(int sock)
{
	fdmsg_t m;
	fdmsg_init(&m);
	ssize_t n;
	do
		n = recvmsg(sock, &m.mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m.mh);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(cm), sizeof fd);
	return fd;
}
