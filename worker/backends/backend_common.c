/* The glue every device backend shares; see backend_common.h. */
#include <dlfcn.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend_common.h"
#include "dtype.h"
#include "util.h"

/* ---- context state ---- */

void kgb_be_ctx_init(kgb_be_ctx_t *c, const kgb_be_vendor_t *v)
{
	memset(c, 0, sizeof *c);
	c->v = v;
}

void *kgb_be_ctx_new(size_t size, const kgb_be_vendor_t *v)
{
	kgb_be_ctx_t *c = kgb_xcalloc(1, size);
	kgb_be_ctx_init(c, v);
	return c;
}

int kgb_be_set_err(kgb_be_ctx_t *c, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof c->err, fmt, ap);
	va_end(ap);
	return code;
}

int kgb_be_fail(kgb_be_ctx_t *c, int code, const char *what, const char *text)
{
	if (code == KGB_BE_FAULT)
		c->dead = true;
	return kgb_be_set_err(c, code, "%s: %s", what, text);
}

int kgb_be_usable(kgb_be_ctx_t *c)
{
	if (c->dead)
		return kgb_be_set_err(c, KGB_BE_FAULT, "%s", c->v->lost);
	if (c->hung)
		return kgb_be_set_err(c, KGB_BE_TIMEOUT, "a kernel is still running past its time limit");
	return KGB_BE_OK;
}

static int timed_out(kgb_be_ctx_t *c, uint32_t timeout_ms)
{
	c->hung = true;
	return kgb_be_set_err(c, KGB_BE_TIMEOUT, "the kernel did not finish within %u ms", timeout_ms);
}

int kgb_be_wait(kgb_be_ctx_t *c, uint32_t timeout_ms)
{
	if (c->v->wait) {
		int r = c->v->wait(c, timeout_ms);
		return r < 0 ? r : r == 0 ? timed_out(c, timeout_ms) : KGB_BE_OK;
	}
	double t0 = kgb_now_ms();
	unsigned spins = 0;
	for (;;) {
		int r = c->v->query(c);
		if (r < 0)
			return r;
		if (r > 0)
			return KGB_BE_OK;
		double el = kgb_now_ms() - t0;
		if (el > timeout_ms)
			return timed_out(c, timeout_ms);
		/* spin briefly (short kernels), then sleep: 20 us, 1 ms after the first 100 ms */
		if (++spins < 2000) {
			sched_yield();
		} else {
			struct timespec ts = { 0, el < 100 ? 20000 : 1000000 };
			nanosleep(&ts, NULL);
		}
	}
}

/* ---- buffers ---- */

const char *kgb_be_last_error(void *ctx)
{
	return ctx ? ((kgb_be_ctx_t *)ctx)->err : "no device context";
}

static kgb_dbuf_t *buf_new(uint64_t addr, size_t bytes, bool owned)
{
	kgb_dbuf_t *b = kgb_xcalloc(1, sizeof *b);
	b->addr = addr;
	b->bytes = bytes;
	b->owned = owned;
	return b;
}

int kgb_be_alloc(void *ctx, size_t bytes, kgb_dbuf_t **out)
{
	kgb_be_ctx_t *c = ctx;
	*out = NULL;
	int rc = kgb_be_usable(c);
	if (rc)
		return rc;
	uint64_t addr = 0;
	size_t want = bytes ? bytes : 1;
	for (size_t i = 0; i < c->npool; i++) {
		if (c->pool[i].bytes != want)
			continue;
		addr = c->pool[i].addr;
		c->pool_bytes -= want;
		c->pool[i] = c->pool[--c->npool];
		*out = buf_new(addr, bytes, true);
		return KGB_BE_OK;
	}
	rc = c->v->mem_alloc(c, want, &addr);
	if (rc == KGB_BE_NOMEM && c->npool) {
		/* the kept buffers may be what is missing */
		kgb_be_pool_drain(c);
		rc = c->v->mem_alloc(c, want, &addr);
	}
	if (rc == KGB_BE_NOMEM)
		kgb_be_set_err(c, KGB_BE_NOMEM, "%s(%zu bytes): out of device memory", c->v->alloc_call, bytes);
	if (rc)
		return rc;
	*out = buf_new(addr, bytes, true);
	return KGB_BE_OK;
}

void kgb_be_free(void *ctx, kgb_dbuf_t *b)
{
	kgb_be_ctx_t *c = ctx;
	if (!b)
		return;
	size_t n = b->bytes ? b->bytes : 1;   /* what kgb_be_alloc asked the runtime for */
	if (b->owned && !c->hung) {
		if (!c->dead && c->npool < KGB_BE_POOL_MAX && c->pool_bytes + n <= KGB_BE_POOL_BYTES) {
			c->pool[c->npool].addr = b->addr;
			c->pool[c->npool++].bytes = n;
			c->pool_bytes += n;
		} else {
			c->v->mem_free(c, b->addr);
		}
	}
	free(b);
}

void kgb_be_pool_drain(kgb_be_ctx_t *c)
{
	for (size_t i = 0; i < c->npool && !c->hung; i++)
		c->v->mem_free(c, c->pool[i].addr);
	c->npool = 0;
	c->pool_bytes = 0;
}

static int outside(kgb_be_ctx_t *c, const char *what, size_t off, size_t n, size_t bytes)
{
	return kgb_be_set_err(c, KGB_BE_ERR, "%s [%zu, +%zu) outside a buffer of %zu bytes", what, off, n, bytes);
}

int kgb_be_view(void *ctx, kgb_dbuf_t *parent, size_t offset, size_t bytes, kgb_dbuf_t **out)
{
	*out = NULL;
	if (offset > parent->bytes || bytes > parent->bytes - offset)
		return outside(ctx, "view", offset, bytes, parent->bytes);
	*out = buf_new(parent->addr + offset, bytes, false);
	return KGB_BE_OK;
}

/* 1 when there is nothing to do (n == 0), a code on a bad range or unusable context. */
static int check_range(kgb_be_ctx_t *c, const kgb_dbuf_t *b, size_t off, size_t n, const char *what)
{
	int rc = kgb_be_usable(c);
	if (rc)
		return rc;
	if (off > b->bytes || n > b->bytes - off)
		return outside(c, what, off, n, b->bytes);
	return n ? KGB_BE_OK : 1;
}

/* Copies and fills are ordered with the launches and finished when they return. */
int kgb_be_write(void *ctx, kgb_dbuf_t *b, size_t off, const void *src, size_t n)
{
	kgb_be_ctx_t *c = ctx;
	int rc = check_range(c, b, off, n, "write");
	return rc ? KGB_MIN(rc, 0) : c->v->copy_in(c, b->addr + off, src, n);
}

int kgb_be_read(void *ctx, kgb_dbuf_t *b, size_t off, void *dst, size_t n)
{
	kgb_be_ctx_t *c = ctx;
	int rc = check_range(c, b, off, n, "read");
	return rc ? KGB_MIN(rc, 0) : c->v->copy_out(c, dst, b->addr + off, n);
}

int kgb_be_fill(void *ctx, kgb_dbuf_t *b, size_t off, uint8_t byte, size_t n)
{
	kgb_be_ctx_t *c = ctx;
	int rc = check_range(c, b, off, n, "fill");
	return rc ? KGB_MIN(rc, 0) : c->v->fill(c, b->addr + off, byte, n);
}

/* ---- runs ---- */

uint64_t kgb_be_addr(void *ctx, kgb_dbuf_t *b)
{
	(void)ctx;
	return b ? b->addr : 0;
}

/* A library routine in place of a kernel launch (kgb_launch_t.call). */
static int run_call(kgb_be_ctx_t *c, const kgb_launch_t *L, size_t li)
{
	char msg[1024] = "";
	int rc = L->call(L->call_arg, msg, sizeof msg);
	if (rc == KGB_BE_OK)
		return KGB_BE_OK;
	if (rc == KGB_BE_FAULT)
		c->dead = true;
	return kgb_be_set_err(c, rc, "launch %zu: %s", li, msg[0] ? msg : "the library call failed");
}

/* A failure while queuing launches (a run or a batch): wait for what was queued (the context state must be
 * known before anything else touches it), then report rc unless the wait found worse. */
static int batch_fail(kgb_be_ctx_t *c, int rc, uint32_t timeout_ms)
{
	if (rc == KGB_BE_FAULT || c->dead || c->hung)
		return rc;
	char keep[KGB_BE_ERRLEN];
	memcpy(keep, c->err, sizeof keep);
	int w = kgb_be_wait(c, timeout_ms);
	if (w == KGB_BE_FAULT || w == KGB_BE_TIMEOUT)
		return w;
	memcpy(c->err, keep, sizeof keep);
	return rc;
}

/* Queue launches[0..n) in order; the first failure's code. The caller, after opening
 * any gate, lets what was queued finish (or fault) with batch_fail so the context
 * state is known; the launch's own error is what it hears, unless the context died or
 * hung meanwhile. */
static int queue_launches(kgb_be_ctx_t *c, const kgb_launch_t *launches, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = launches[i].call ? run_call(c, &launches[i], i) : c->v->launch(c, &launches[i], i);
		if (rc != KGB_BE_OK)
			return rc;
	}
	return KGB_BE_OK;
}

int kgb_be_run(void *ctx, const kgb_launch_t *launches, size_t n, uint32_t timeout_ms, double *elapsed_ns)
{
	kgb_be_ctx_t *c = ctx;
	const kgb_be_vendor_t *v = c->v;
	int rc = kgb_be_usable(c);
	if (rc)
		return rc;
	if (timeout_ms == 0)
		timeout_ms = 60000;
	bool gated = elapsed_ns && v->gate;
	if (gated && (rc = v->gate(c, KGB_BE_MAX_BATCH)) != KGB_BE_OK)
		return batch_fail(c, rc, timeout_ms);
	if ((rc = v->run_begin(c, n, elapsed_ns != NULL)) == KGB_BE_OK &&
	    (rc = queue_launches(c, launches, n)) == KGB_BE_OK && v->run_end)
		rc = v->run_end(c, elapsed_ns != NULL);
	if (gated)
		v->release(c); /* also after a failure: nothing may wait for the time-out */
	if (rc != KGB_BE_OK)
		return batch_fail(c, rc, timeout_ms);
	if ((rc = kgb_be_wait(c, timeout_ms)) != KGB_BE_OK)
		return rc;
	return elapsed_ns ? v->elapsed(c, elapsed_ns) : KGB_BE_OK;
}

int kgb_be_scrub_local(void *ctx)
{
	kgb_be_ctx_t *c = ctx;
	int rc = kgb_be_usable(c);
	if (rc)
		return rc;
	if (!c->v->scrub)
		return kgb_be_set_err(c, KGB_BE_UNSUPPORTED, "this backend has no scrub of local memory");
	return c->v->scrub(c);
}

/* Marks: 0 before the first sample's prep, then 2k+1 and 2k+2 around sample k's
 * launches, behind its gate where the vendor has one (a sample whose gate timed out
 * gets -1); one wait for the whole batch. */
int kgb_be_run_samples(void *ctx, const kgb_prep_t *prep, size_t nprep, const kgb_launch_t *launches, size_t n,
                       size_t count, uint32_t timeout_ms, double *sample_ns, double *busy_ns, bool scrub)
{
	kgb_be_ctx_t *c = ctx;
	const kgb_be_vendor_t *v = c->v;
	if (!v->copy_async || !v->fill_async || !v->flush || !v->mark || !v->between)
		return kgb_be_set_err(c, KGB_BE_UNSUPPORTED, "this backend times one sample at a time");
	int rc = kgb_be_usable(c);
	if (rc)
		return rc;
	if (count == 0 || count > KGB_BE_MAX_BATCH)
		return kgb_be_set_err(c, KGB_BE_ERR, "a batch of %zu samples (1 to %d)", count, KGB_BE_MAX_BATCH);
	for (size_t i = 0; i < nprep; i++) {
		const kgb_prep_t *P = &prep[i];
		if (!P->dst || P->bytes > P->dst->bytes ||
		    (P->src && (P->bytes > P->src->bytes ||
		                (count > 1 && P->stride > (P->src->bytes - P->bytes) / (count - 1)))))
			return kgb_be_set_err(c, KGB_BE_ERR, "batch prep %zu: %zu bytes do not fit its buffers", i, P->bytes);
	}
	if (timeout_ms == 0)
		timeout_ms = 60000;
	if ((rc = v->mark(c, 0)) != KGB_BE_OK)
		return batch_fail(c, rc, timeout_ms);
	for (size_t k = 0; k < count; k++) {
		for (size_t i = 0; i < nprep && rc == KGB_BE_OK; i++) {
			const kgb_prep_t *P = &prep[i];
			if (P->bytes == 0)
				continue;
			rc = P->src ? v->copy_async(c, P->dst->addr, P->src->addr + k * P->stride, P->bytes)
			            : v->fill_async(c, P->dst->addr, P->byte, P->bytes);
		}
		/* the scrub and the flush after the restore, before the sample's first event:
		 * outside its time, as when samples run one at a time */
		if (rc == KGB_BE_OK && scrub && v->scrub)
			rc = v->scrub(c);
		if (rc == KGB_BE_OK)
			rc = v->flush(c);
		if (rc == KGB_BE_OK && v->gate && (rc = v->gate(c, k)) != KGB_BE_OK)
			return batch_fail(c, rc, timeout_ms);
		if (rc == KGB_BE_OK && (rc = v->mark(c, 2 * k + 1)) == KGB_BE_OK &&
		    (rc = queue_launches(c, launches, n)) == KGB_BE_OK)
			rc = v->mark(c, 2 * k + 2);
		if (v->gate)
			v->release(c); /* also after a failure: nothing may wait for the time-out */
		if (rc != KGB_BE_OK)
			return batch_fail(c, rc, timeout_ms);
	}
	if ((rc = kgb_be_wait(c, timeout_ms)) != KGB_BE_OK)
		return rc;
	for (size_t k = 0; k < count; k++) {
		if ((rc = v->between(c, 2 * k + 1, 2 * k + 2, &sample_ns[k])) != KGB_BE_OK)
			return rc;
		if (v->gate && v->gate_missed(c, k))
			sample_ns[k] = -1;
	}
	return v->between(c, 0, 2 * count, busy_ns);
}

/* ---- timing events ---- */

int kgb_be_ev_open(kgb_be_ctx_t *c)
{
	int rc = c->v->ev_create(c, &c->ev[0]);
	return rc ? rc : c->v->ev_create(c, &c->ev[1]);
}

void kgb_be_ev_close(kgb_be_ctx_t *c)
{
	if (!c->hung) {
		for (int i = 0; i < 2; i++)
			if (c->ev[i])
				c->v->ev_destroy(c, c->ev[i]);
		for (size_t i = 0; i < c->nmarks; i++)
			c->v->ev_destroy(c, c->marks[i]);
	}
	free(c->marks);
	c->marks = NULL;
	c->nmarks = 0;
	c->ev[0] = c->ev[1] = NULL;
}

int kgb_be_ev_run_begin(kgb_be_ctx_t *c, size_t n, bool timed)
{
	(void)n;
	return timed ? c->v->ev_record(c, c->ev[0]) : KGB_BE_OK;
}

int kgb_be_ev_run_end(kgb_be_ctx_t *c, bool timed)
{
	return timed ? c->v->ev_record(c, c->ev[1]) : KGB_BE_OK;
}

static int ev_ns(kgb_be_ctx_t *c, void *a, void *b, double *ns)
{
	float ms = 0;
	int rc = c->v->ev_ms(c, a, b, &ms);
	if (rc == KGB_BE_OK)
		*ns = (double)ms * 1e6;
	return rc;
}

int kgb_be_ev_elapsed(kgb_be_ctx_t *c, double *ns)
{
	return ev_ns(c, c->ev[0], c->ev[1], ns);
}

int kgb_be_ev_mark(kgb_be_ctx_t *c, size_t k)
{
	while (k >= c->nmarks) {
		void *e = NULL;
		int rc = c->v->ev_create(c, &e);
		if (rc)
			return rc;
		c->marks = kgb_xrealloc(c->marks, (c->nmarks + 1) * sizeof *c->marks);
		c->marks[c->nmarks++] = e;
	}
	return c->v->ev_record(c, c->marks[k]);
}

int kgb_be_ev_between(kgb_be_ctx_t *c, size_t a, size_t b, double *ns)
{
	if (a >= c->nmarks || b >= c->nmarks)
		return kgb_be_set_err(c, KGB_BE_ERR, "event %zu or %zu was never recorded", a, b);
	return ev_ns(c, c->marks[a], c->marks[b], ns);
}

/* ---- compiles and launches ---- */

int kgb_be_compile_begin(kgb_be_ctx_t *c, kgb_module_t **out, char *log, size_t loglen)
{
	*out = NULL;
	if (log && loglen)
		log[0] = 0;
	return kgb_be_usable(c);
}

int kgb_be_kernel_arg(kgb_be_ctx_t *c, const kgb_larg_t *A, size_t li, size_t i, const char *lang, uint64_t *store)
{
	*store = 0;
	switch (A->kind) {
	case KGB_LARG_BUF:
		*store = A->buf ? A->buf->addr : 0;
		break;
	case KGB_LARG_SCALAR:
		if (A->size == 0 || A->size > 8)
			return kgb_be_set_err(c, KGB_BE_ERR, "launch %zu: scalar argument %zu has %zu bytes", li, i, A->size);
		memcpy(store, A->bytes, A->size);
		break;
	case KGB_LARG_LOCAL:
		return kgb_be_set_err(c, KGB_BE_ERR, "launch %zu: argument %zu is OpenCL local memory; %s kernels take "
		                      "dynamic shared memory through the plan's 'shared'", li, i, lang);
	}
	return KGB_BE_OK;
}

void kgb_be_ckey_begin(kgb_ckey_t *k, const char *lang, const char *text, const char *entry,
                       const char *const *opts, int nopts)
{
	kgb_ckey_init(k);
	kgb_ckey_add_str(k, "lang", lang);
	kgb_ckey_add_str(k, "source", text);
	kgb_ckey_add_str(k, "entry", entry);
	for (int i = 0; i < nopts; i++)
		kgb_ckey_add_str(k, "option", opts[i]);
}

static uint32_t health_value(uint32_t i)
{
	return i * 2654435761u + 12345u;
}

int kgb_be_health(const kgb_backend_t *be, void *ctx, const kgb_compile_req_t *req)
{
	enum { N = 65536 };
	kgb_be_ctx_t *c = ctx;
	kgb_module_t *m = NULL;
	kgb_dbuf_t *b = NULL;
	uint32_t *host = NULL;
	char log[1024];
	int rc = kgb_be_usable(c);
	if (rc)
		return rc;
	host = kgb_xmalloc(N * sizeof(uint32_t));
	if ((rc = be->alloc(ctx, N * sizeof(uint32_t), &b)) != 0)
		goto out;
	if ((rc = be->fill(ctx, b, 0, 0xff, N * sizeof(uint32_t))) != 0)
		goto out;
	if (req) {
		if ((rc = be->compile(ctx, req, &m, log, sizeof log)) != 0)
			goto out;
		kgb_larg_t args[2] = { { .kind = KGB_LARG_BUF, .buf = b }, { .kind = KGB_LARG_SCALAR, .size = 4 } };
		uint32_t n = N;
		memcpy(args[1].bytes, &n, 4);
		kgb_launch_t L = { .mod = m, .grid = { N / 256, 1, 1 }, .block = { 256, 1, 1 }, .args = args,
			               .nargs = 2 };
		if ((rc = be->run(ctx, &L, 1, 5000, NULL)) != 0)
			goto out;
	} else {
		for (uint32_t i = 0; i < N; i++)
			host[i] = health_value(i);
		if ((rc = be->write(ctx, b, 0, host, N * sizeof(uint32_t))) != 0)
			goto out;
		memset(host, 0, N * sizeof(uint32_t));
	}
	if ((rc = be->read(ctx, b, 0, host, N * sizeof(uint32_t))) != 0)
		goto out;
	for (uint32_t i = 0; i < N; i++) {
		if (host[i] != health_value(i)) {
			rc = kgb_be_set_err(c, KGB_BE_ERR, "health %s: element %u is 0x%08x, expected 0x%08x",
			                    req ? "kernel" : "memory round trip", i, host[i], health_value(i));
			goto out;
		}
	}
	rc = KGB_BE_OK;
out:
	free(host);
	be->free(ctx, b);
	be->module_free(ctx, m);
	return rc;
}

/* ---- compile helpers ---- */

void *kgb_be_dlopen_first(const char *over, const char *const *names, size_t n, const char **used, char *tried,
                          size_t triedlen, char *first, size_t firstlen)
{
	tried[0] = first[0] = 0;
	for (size_t i = 0; i <= n; i++) {
		const char *name = i == 0 ? over : names[i - 1];
		if (!name || !*name)
			continue;
		void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
		if (h) {
			*used = name;
			return h;
		}
		size_t l = strlen(tried);
		snprintf(tried + l, triedlen - l, "%s%s", l ? ", " : "", name);
		if (!first[0]) {
			const char *e = dlerror();
			snprintf(first, firstlen, "%s", e ? e : "cannot load");
		}
	}
	return NULL;
}

const void *kgb_be_loaded(bool ok, const void *api, const char *msg, char *why, size_t whylen)
{
	if (ok)
		return api;
	if (why && whylen)
		snprintf(why, whylen, "%s", msg);
	return NULL;
}

bool kgb_be_is_ident(const char *s)
{
	if (!s || !(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')))
		return false;
	for (s++; *s; s++)
		if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

void kgb_be_copy_log(char *log, size_t loglen, const char *text)
{
	if (log && loglen)
		snprintf(log, loglen, "%s", text ? text : "");
}

int kgb_be_split_opts(const char *s, char ***out)
{
	int n = 0, cap = 8;
	char **v = kgb_xcalloc((size_t)cap, sizeof *v);
	while (s && *s) {
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		const char *e = s;
		while (*e && *e != ' ' && *e != '\t' && *e != '\n')
			e++;
		if (n + 1 >= cap) {
			cap *= 2;
			v = kgb_xrealloc(v, (size_t)cap * sizeof *v);
		}
		v[n] = kgb_xmalloc((size_t)(e - s) + 1);
		memcpy(v[n], s, (size_t)(e - s));
		v[n][e - s] = 0;
		n++;
		s = e;
	}
	*out = v;
	return n;
}

void kgb_be_free_opts(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

uint32_t kgb_be_env_u32(const char *name, uint32_t dflt)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return dflt;
	char *end;
	unsigned long x = strtoul(v, &end, 10);
	return *end || x == 0 || x > UINT32_MAX ? dflt : (uint32_t)x;
}

bool kgb_be_has_dtype(const kgb_dtype_t *dtypes, size_t n, kgb_dtype_t dt)
{
	for (size_t i = 0; i < n; i++)
		if (dtypes[i] == dt)
			return true;
	return false;
}

void kgb_be_cxx_tensors(FILE *f, const char *const *names, const kgb_dtype_t *dtypes, size_t n,
                        const char *bf16_type, const char *file, const char *dflt_file)
{
	for (size_t i = 0; i < n; i++) {
		const char *nm = names[i];
		kgb_dtype_t dt = dtypes[i];
		if (!kgb_be_is_ident(nm))
			continue;
		const char *ty = dt == KGB_DT_BF16 && bf16_type ? bf16_type : kgb_dtype_cuda_type(dt);
		fprintf(f, "typedef %s T_%s;\n", ty, nm);
		fprintf(f, "#define KGB_DTYPE_%s_%s 1\n", nm, kgb_dtype_name(dt));
		if (kgb_dtype_is_float(dt) && dt != KGB_DT_F64) {
			fprintf(f, "#define LOAD_%s(p, i) ((float)((p)[(i)]))\n", nm);
			fprintf(f, "#define STORE_%s(p, i, v) ((p)[(i)] = (T_%s)((float)(v)))\n", nm, nm);
		} else {
			fprintf(f, "#define LOAD_%s(p, i) ((p)[(i)])\n", nm);
			fprintf(f, "#define STORE_%s(p, i, v) ((p)[(i)] = (T_%s)(v))\n", nm, nm);
		}
	}
	fprintf(f, "#line 1 \"%s\"\n", file && !strpbrk(file, "\"\\\n") ? file : dflt_file);
}

char *kgb_be_prelude_join(char *prelude, const char *source, size_t source_len)
{
	size_t plen = strlen(prelude);
	char *text = kgb_xmalloc(plen + source_len + 2);
	memcpy(text, prelude, plen);
	memcpy(text + plen, source, source_len);
	text[plen + source_len] = '\n';
	text[plen + source_len + 1] = 0;
	free(prelude);
	return text;
}

static int rtc_compile(kgb_be_ctx_t *c, const kgb_be_rtc_t *j, char **bin, size_t *binlen, char *log, size_t loglen);

int kgb_be_rtc_run(kgb_be_ctx_t *c, const kgb_be_rtc_t *j, char **bin, size_t *binlen, char *log, size_t loglen)
{
	size_t n = 0;
	int rc, lk = -1;
again:;
	char *cached = kgb_compile_cache_get(j->key, j->artifact, &n);
	if (cached) {
		kgb_compile_cache_unlock(lk);
		*bin = cached;
		*binlen = n;
		return KGB_BE_OK;
	}
	char *cerr = kgb_compile_cache_get(j->key, "error.log", &n);
	if (cerr) {
		kgb_compile_cache_unlock(lk);
		kgb_be_copy_log(log, loglen, cerr);
		rc = kgb_be_set_err(c, KGB_BE_COMPILE, "%s compile failed (cached): %.1500s", j->lang, cerr);
		free(cerr);
		return rc;
	}
	/* a miss: compile holding the entry's lock, after looking once more */
	if (lk < 0 && (lk = kgb_compile_cache_lock(j->key)) >= 0)
		goto again;
	rc = rtc_compile(c, j, bin, binlen, log, loglen);
	kgb_compile_cache_unlock(lk);
	return rc;
}

/* kgb_be_rtc_run's compile in its sandbox, the entry filled. */
static int rtc_compile(kgb_be_ctx_t *c, const kgb_be_rtc_t *j, char **bin, size_t *binlen, char *log, size_t loglen)
{
	int rc;
	kgb_sandbox_result_t sr;
	char serr[256];
	memset(&sr, 0, sizeof sr);
	if (kgb_sandbox_run(j->so, NULL, j->child, j->arg, &sr, serr, sizeof serr) != 0) {
		kgb_sandbox_release(&sr);
		return kgb_be_set_err(c, KGB_BE_ERR, "%s", serr);
	}
	size_t ll = 0;
	char *clog = kgb_sandbox_read(&sr, "compile.log", &ll);
	if (sr.timed_out) {
		rc = kgb_be_set_err(c, KGB_BE_COMPILE, "%s ran past its %u ms limit", j->tool, j->so->wall_ms);
		kgb_be_copy_log(log, loglen, c->err);
	} else if (sr.exit_code == 0) {
		*bin = kgb_sandbox_read(&sr, j->artifact, binlen);
		if (!*bin) {
			rc = kgb_be_set_err(c, KGB_BE_ERR, "the %s child left no %s", j->tool, j->artifact);
		} else {
			kgb_compile_cache_put(j->key, j->artifact, *bin, *binlen);
			kgb_be_copy_log(log, loglen, clog);
			rc = KGB_BE_OK;
		}
	} else if (sr.exit_code == 1) {
		kgb_be_copy_log(log, loglen, clog);
		kgb_compile_cache_put(j->key, "error.log", clog ? clog : "", clog ? ll : 0);
		rc = kgb_be_set_err(c, KGB_BE_COMPILE, "%s compile failed: %.1500s", j->lang, clog ? clog : "");
	} else {
		rc = kgb_be_set_err(c, sr.signo ? KGB_BE_COMPILE : KGB_BE_ERR, "the %s child ended with %s %d: %.1000s%.500s",
		                    j->tool, sr.signo ? "signal" : "status", sr.signo ? sr.signo : sr.exit_code,
		                    clog ? clog : "", sr.output ? sr.output : "");
		kgb_be_copy_log(log, loglen, c->err);
	}
	free(clog);
	kgb_sandbox_release(&sr);
	return rc;
}
