/* The operator catalog: registry, parameter parsing, case expansion, symbols,
 * input generation and the reference cache. The operators themselves live in
 * common/ops/ (one table per family, listed in common/ops/registry.c). */
#include "catalog.h"

#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <utime.h>

#include "log.h"
#include "ops/ops.h"

/* Bump when a reference implementation or the input generator changes in a way the
 * definitions hash cannot see: it invalidates every cached reference. */
#define KGB_CATALOG_REVISION "6"

/* ---- parsed parameter lists ---- */

typedef struct pgrid {
	int nparams;
	int nvals[KGB_MAX_PARAMS];
	kgb_pval_t *vals[KGB_MAX_PARAMS];
	uint32_t ncases;
} pgrid_t;

typedef struct pop {
	const kgb_op_t *op;
	int ngrids;
	pgrid_t g[KGB_MAX_GRIDS];
	uint32_t ncases;
	uint32_t nsmoke;           /* cases of the first op->smoke_grids grids */
	int64_t timed;             /* -1 until counted */
	char heldout[96];          /* kgb_op_heldout_params ("" when none) */
	const char *no_heldout;    /* why it has none */
} pop_t;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pop_t *g_ops;
static size_t g_nops;
static char g_version[64];
/* operators built outside the registry (tests): parsed on first use, kept forever */
static pop_t **g_extra;
static size_t g_nextra;

static _Noreturn void catalog_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void catalog_die(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "kgb catalog: %s\n", msg);
	abort();
}

/* Parse one value token into *pv. Returns 0 or -1. */
static int parse_value(const char *tok, size_t len, kgb_pval_t *pv)
{
	char buf[64];
	char *end;
	memset(pv, 0, sizeof *pv);
	if (len == 0 || len >= sizeof pv->s)
		return -1;
	memcpy(buf, tok, len);
	buf[len] = '\0';
	memcpy(pv->s, buf, len + 1);
	if (buf[0] == '[') {
		const char *p = buf + 1;
		pv->kind = KGB_PV_SHAPE;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == ']')
			return p[1] == '\0' ? 0 : -1;
		for (;;) {
			long long v;
			if (pv->ndim >= KGB_MAX_DIMS)
				return -1;
			errno = 0;
			v = strtoll(p, &end, 10);
			if (end == p || errno || v < 0)
				return -1;
			pv->dims[pv->ndim++] = v;
			p = end;
			while (isspace((unsigned char)*p))
				p++;
			if (*p == ']')
				return p[1] == '\0' ? 0 : -1;
			if (*p != ',')
				return -1;
			p++;
		}
	}
	errno = 0;
	{
		long long v = strtoll(buf, &end, 10);
		if (*end == '\0' && errno == 0) {
			pv->kind = KGB_PV_INT;
			pv->i = v;
			pv->f = (double)v;
			return 0;
		}
	}
	errno = 0;
	{
		double f = strtod(buf, &end);
		if (*end == '\0' && errno == 0 && isfinite(f)) {
			pv->kind = KGB_PV_FLOAT;
			pv->f = f;
			pv->i = (int64_t)f;
			return 0;
		}
	}
	if (!(isalpha((unsigned char)buf[0]) || buf[0] == '_'))
		return -1;
	for (size_t i = 1; i < len; i++) {
		unsigned char ch = (unsigned char)buf[i];
		if (!(isalnum(ch) || ch == '_' || ch == '.' || ch == '-'))
			return -1;
	}
	pv->kind = KGB_PV_STR;
	return 0;
}

/* Whether the space-separated list names w. */
static bool in_words(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *q = list; (q = strstr(q, w)) != NULL; q += n)
		if ((q == list || q[-1] == ' ') && (q[n] == ' ' || q[n] == 0))
			return true;
	return false;
}

/* The generic rule of held-out parameters (catalog.h, kgb_op_heldout_params): whether
 * parameter name of kind k is a size a kernel of op must take at any value. */
static bool generic_size_param(const kgb_op_t *op, const char *name, kgb_pv_kind_t k)
{
	static const char *const shapes[] = {"shape", "self_shape", "size", "mnk", "mn", "nk", NULL};
	const char *src = op->source ? op->source : "";
	bool aten = strcmp(src, "aten") == 0, cublas = strcmp(src, "cublas") == 0;
	if (k == KGB_PV_SHAPE && (aten || cublas)) {
		for (size_t i = 0; shapes[i]; i++)
			if (strcmp(name, shapes[i]) == 0)
				return true;
		return false;
	}
	if (k == KGB_PV_INT && cublas)
		return strcmp(name, "m") == 0 || strcmp(name, "n") == 0;
	if (k == KGB_PV_INT && strcmp(src, "vllm") == 0)
		return strcmp(name, "num_tokens") == 0;
	return false;
}

/* po->heldout and po->no_heldout from the definition or the generic rule. */
static void derive_heldout(const kgb_op_t *op, pop_t *po)
{
	po->heldout[0] = '\0';
	po->no_heldout = NULL;
	if (op->no_heldout) {
		po->no_heldout = op->no_heldout;
		return;
	}
	if (op->heldout) {
		if (strlen(op->heldout) >= sizeof po->heldout)
			catalog_die("op '%s': .heldout '%s' is too long", op->name, op->heldout);
		snprintf(po->heldout, sizeof po->heldout, "%s", op->heldout);
		if (!po->heldout[0])
			po->no_heldout = "its definition declares no size parameter for them";
		return;
	}
	for (int g = 0; g < po->ngrids; g++)
		for (int p = 0; p < po->g[g].nparams; p++) {
			const char *pn = op->grids[g].params[p].name;
			size_t n = strlen(pn), len = strlen(po->heldout);
			bool ok = !in_words(po->heldout, pn); /* not taken from an earlier grid */
			bool grows = false; /* some value has a size of 2 or more (resize_value) */
			for (int g2 = 0; ok && g2 < po->ngrids; g2++)
				for (int p2 = 0; ok && p2 < po->g[g2].nparams; p2++)
					if (strcmp(op->grids[g2].params[p2].name, pn) == 0)
						for (int k = 0; ok && k < po->g[g2].nvals[p2]; k++) {
							const kgb_pval_t *v = &po->g[g2].vals[p2][k];
							ok = generic_size_param(op, pn, v->kind);
							grows = grows || (v->kind == KGB_PV_INT && v->i >= 2);
							for (int d = 0; v->kind == KGB_PV_SHAPE && d < v->ndim; d++)
								grows = grows || v->dims[d] >= 2;
						}
			if (ok && grows && len + n + 2 < sizeof po->heldout)
				snprintf(po->heldout + len, sizeof po->heldout - len, "%s%s", len ? " " : "", pn);
		}
	if (!po->heldout[0])
		po->no_heldout = "no parameter the generic rule resizes (ATen and cuBLAS shapes, cuBLAS m and n,\n"
		                 "vLLM num_tokens)";
}

static void parse_op(const kgb_op_t *op, pop_t *po)
{
	uint64_t total = 0;
	memset(po, 0, sizeof *po);
	po->op = op;
	po->timed = -1;
	if (!op->name || !op->name[0])
		catalog_die("an operator has no name");
	if (!op->setup || !op->ref)
		catalog_die("op '%s': setup and ref are required", op->name);
	for (int g = 0; g < KGB_MAX_GRIDS && op->grids[g].params[0].name; g++) {
		pgrid_t *pg = &po->g[g];
		uint64_t n = 1;
		po->ngrids = g + 1;
		for (int p = 0; p < KGB_MAX_PARAMS && op->grids[g].params[p].name; p++) {
			const kgb_param_spec_t *ps = &op->grids[g].params[p];
			const char *s = ps->values;
			kgb_pval_t tmp[KGB_MAX_PVALS];
			int nv = 0;
			for (int q = 0; q < p; q++)
				if (strcmp(op->grids[g].params[q].name, ps->name) == 0)
					catalog_die("op '%s' grid %d: parameter '%s' listed twice", op->name, g, ps->name);
			if (!s)
				catalog_die("op '%s' grid %d param '%s': no values", op->name, g, ps->name);
			for (;;) {
				const char *b;
				while (isspace((unsigned char)*s))
					s++;
				if (!*s)
					break;
				b = s;
				if (*s == '[') {
					while (*s && *s != ']')
						s++;
					if (*s != ']')
						catalog_die("op '%s' grid %d param '%s': unterminated shape '%s'", op->name,
						            g, ps->name, b);
					s++;
				} else {
					while (*s && !isspace((unsigned char)*s))
						s++;
				}
				if (nv >= KGB_MAX_PVALS)
					catalog_die("op '%s' grid %d param '%s': more than %d values", op->name, g,
					            ps->name, KGB_MAX_PVALS);
				if (parse_value(b, (size_t)(s - b), &tmp[nv]) != 0)
					catalog_die("op '%s' grid %d param '%s': malformed value '%.*s'", op->name, g,
					            ps->name, (int)(s - b), b);
				nv++;
			}
			if (nv == 0)
				catalog_die("op '%s' grid %d param '%s': empty value list", op->name, g, ps->name);
			pg->vals[p] = kgb_xmalloc((size_t)nv * sizeof(kgb_pval_t));
			memcpy(pg->vals[p], tmp, (size_t)nv * sizeof(kgb_pval_t));
			pg->nvals[p] = nv;
			pg->nparams = p + 1;
			n *= (uint64_t)nv;
			if (n > UINT32_MAX)
				catalog_die("op '%s' grid %d: too many cases", op->name, g);
		}
		pg->ncases = (uint32_t)n;
		total += n;
	}
	if (po->ngrids == 0)
		catalog_die("op '%s': no case grid", op->name);
	if (total > UINT32_MAX)
		catalog_die("op '%s': too many cases", op->name);
	po->ncases = (uint32_t)total;
	if (op->smoke_grids < 0 || op->smoke_grids > po->ngrids)
		catalog_die("op '%s': smoke_grids = %d, but it has %d grids", op->name, op->smoke_grids,
		            po->ngrids);
	po->nsmoke = po->ncases;
	if (op->smoke_grids > 0) {
		po->nsmoke = 0;
		for (int g = 0; g < op->smoke_grids; g++)
			po->nsmoke += po->g[g].ncases;
	}
	derive_heldout(op, po);
}

static void hash_str(kgb_sha256_t *h, const char *s)
{
	if (!s)
		s = "";
	kgb_sha256_update(h, s, strlen(s) + 1);
}

static void catalog_init(void)
{
	size_t n = 0, k = 0;
	kgb_sha256_t h;
	char hex[65];
	for (size_t f = 0; kgb_op_families[f]; f++)
		for (size_t i = 0; kgb_op_families[f][i]; i++)
			n++;
	g_ops = kgb_xcalloc(n ? n : 1, sizeof(pop_t));
	kgb_sha256_init(&h);
	for (size_t f = 0; kgb_op_families[f]; f++) {
		for (size_t i = 0; kgb_op_families[f][i]; i++) {
			const kgb_op_t *op = kgb_op_families[f][i];
			for (size_t j = 0; j < k; j++)
				if (strcmp(g_ops[j].op->name, op->name) == 0)
					catalog_die("op '%s' defined twice", op->name);
			parse_op(op, &g_ops[k++]);
			hash_str(&h, op->name);
			hash_str(&h, op->source);
			hash_str(&h, op->signature);
			for (int g = 0; g < g_ops[k - 1].ngrids; g++) {
				for (int p = 0; p < g_ops[k - 1].g[g].nparams; p++) {
					hash_str(&h, op->grids[g].params[p].name);
					hash_str(&h, op->grids[g].params[p].values);
				}
				hash_str(&h, "|");
			}
			/* held-out sizes differ when the parameters they resize do */
			hash_str(&h, g_ops[k - 1].heldout);
			if (op->smoke_grids > 0) {
				char sg[32];
				snprintf(sg, sizeof sg, "smoke=%d", op->smoke_grids);
				hash_str(&h, sg);
			}
		}
	}
	g_nops = k;
	kgb_sha256_final_hex(&h, hex);
	snprintf(g_version, sizeof g_version, "%s-%.12s", KGB_CATALOG_REVISION, hex);
}

static void ensure_init(void)
{
	pthread_once(&g_once, catalog_init);
}

static pop_t *find_pop(const kgb_op_t *op)
{
	pop_t *po = NULL;
	ensure_init();
	for (size_t i = 0; i < g_nops; i++)
		if (g_ops[i].op == op)
			return &g_ops[i];
	pthread_mutex_lock(&g_lock);
	for (size_t i = 0; i < g_nextra; i++)
		if (g_extra[i]->op == op)
			po = g_extra[i];
	if (!po) {
		po = kgb_xmalloc(sizeof *po);
		parse_op(op, po);
		g_extra = kgb_xrealloc(g_extra, (g_nextra + 1) * sizeof *g_extra);
		g_extra[g_nextra++] = po;
	}
	pthread_mutex_unlock(&g_lock);
	return po;
}

/* ---- registry ---- */

/* Number of operators in the catalog (parses every definition on first use). */
size_t kgb_catalog_count(void)
{
	ensure_init();
	return g_nops;
}

/* Operator i in catalog order, or NULL past the end. Static storage. */
const kgb_op_t *kgb_catalog_at(size_t i)
{
	ensure_init();
	return i < g_nops ? g_ops[i].op : NULL;
}

/* The operator named `name` (exact match), or NULL. */
const kgb_op_t *kgb_catalog_find(const char *name)
{
	ensure_init();
	if (!name)
		return NULL;
	for (size_t i = 0; i < g_nops; i++)
		if (strcmp(g_ops[i].op->name, name) == 0)
			return g_ops[i].op;
	return NULL;
}

/* "<revision>-<12 hex digits of sha256 over every definition>". Static string. */
const char *kgb_catalog_version(void)
{
	ensure_init();
	return g_version;
}

/* Dataset name -> mask. Returns 0, or -1 for an unknown name. */
int kgb_dataset_parse(const char *name, unsigned *mask)
{
	static const struct { const char *n; unsigned m; } tab[] = {
		{ "aten", KGB_DS_ATEN }, { "mc", KGB_DS_MC }, { "vllm", KGB_DS_VLLM },
		{ "cublas", KGB_DS_CUBLAS }, { "nocublas", KGB_DS_NOCUBLAS }, { "ms", KGB_DS_MS },
		{ "demo", KGB_DS_DEMO }, { "all", KGB_DS_MS | KGB_DS_DEMO },
	};
	if (!name)
		return -1;
	for (size_t i = 0; i < KGB_ARRAY_LEN(tab); i++) {
		if (strcasecmp(name, tab[i].n) == 0) {
			*mask = tab[i].m;
			return 0;
		}
	}
	return -1;
}

/* Number of cases of op (the sum over its grids of the product of the list lengths). */
uint32_t kgb_op_case_count(const kgb_op_t *op)
{
	return find_pop(op)->ncases;
}

/* Number of cases of the smoke subset (see catalog.h). */
uint32_t kgb_op_smoke_case_count(const kgb_op_t *op)
{
	return find_pop(op)->nsmoke;
}

/* See catalog.h. */
int kgb_op_overloads(const kgb_op_t *op, const char *names[KGB_MAX_OVERLOADS], uint32_t *counts)
{
	const pop_t *po = find_pop(op);
	int n = 0;
	for (int g = 0; g < po->ngrids; g++) {
		const pgrid_t *pg = &po->g[g];
		for (int p = 0; p < pg->nparams; p++) {
			if (strcmp(op->grids[g].params[p].name, KGB_OVERLOAD_PARAM) != 0)
				continue;
			for (int k = 0; k < pg->nvals[p]; k++) {
				const char *v = pg->vals[p][k].s;
				int i;
				for (i = 0; i < n && strcmp(names[i], v) != 0; i++)
					;
				KGB_ASSERT_MSG(i < KGB_MAX_OVERLOADS, "op %s: more than %d overloads", op->name,
				               KGB_MAX_OVERLOADS);
				if (i == n) {
					names[n] = v;
					if (counts)
						counts[n] = 0;
					n++;
				}
				if (counts)
					counts[i] += pg->ncases / (uint32_t)pg->nvals[p];
			}
		}
	}
	return n;
}

/* See catalog.h. */
const char *kgb_case_overload(const kgb_case_t *c, char *buf, size_t n)
{
	const char *v = kgb_case_pstr(c, KGB_OVERLOAD_PARAM, NULL);
	if (!v)
		return NULL;
	snprintf(buf, n, "%s.%s", c->op->name, v);
	return buf;
}

/* Number of timed cases; builds every case once, then remembers the answer. */
uint32_t kgb_op_timed_count(const kgb_op_t *op)
{
	pop_t *po = find_pop(op);
	int64_t t;
	pthread_mutex_lock(&g_lock);
	t = po->timed;
	pthread_mutex_unlock(&g_lock);
	if (t >= 0)
		return (uint32_t)t;
	t = 0;
	for (uint32_t i = 0; i < po->ncases; i++) {
		kgb_case_t c;
		char err[256];
		if (kgb_case_build(op, i, &c, err, sizeof err) != 0) {
			log_warn("op=%s case=%u does not build: %s", op->name, i, err);
			continue;
		}
		if (c.timed)
			t++;
		kgb_case_release(&c);
	}
	pthread_mutex_lock(&g_lock);
	po->timed = t;
	pthread_mutex_unlock(&g_lock);
	return (uint32_t)t;
}

/* ---- tensors ---- */

static void contig_strides(kgb_tensor_t *t)
{
	int64_t s = 1;
	for (int d = t->ndim - 1; d >= 0; d--) {
		t->stride[d] = s;
		s *= t->shape[d] > 0 ? t->shape[d] : 1;
	}
}

/* Recompute numel and storage (the span of the view) from shape and stride. */
void kgb_tensor_finish(kgb_tensor_t *t)
{
	size_t n = 1, span = 1;
	for (int d = 0; d < t->ndim; d++) {
		n *= (size_t)t->shape[d];
		if (t->shape[d] > 0)
			span += (size_t)((t->shape[d] - 1) * t->stride[d]);
	}
	t->numel = n;
	t->storage = n == 0 ? 0 : span;
}

/* Add a contiguous tensor with the default generator. Aborts past KGB_MAX_TENSORS. */
kgb_tensor_t *kgb_case_add_tensor(kgb_case_t *c, const char *name, kgb_role_t role, kgb_dtype_t dt,
                                  int ndim, const int64_t *shape)
{
	kgb_tensor_t *t;
	KGB_ASSERT_MSG(c->ntensors < KGB_MAX_TENSORS, "op %s: too many tensors", c->op->name);
	KGB_ASSERT_MSG(ndim >= 0 && ndim <= KGB_MAX_DIMS, "op %s tensor %s: ndim %d", c->op->name, name, ndim);
	KGB_ASSERT_MSG(kgb_case_tensor_index(c, name) < 0, "op %s: tensor %s twice", c->op->name, name);
	t = &c->t[c->ntensors++];
	memset(t, 0, sizeof *t);
	t->name = name;
	t->role = role;
	t->dtype = dt;
	t->ndim = ndim;
	for (int d = 0; d < ndim; d++) {
		KGB_ASSERT_MSG(shape[d] >= 0, "op %s tensor %s: negative dim", c->op->name, name);
		t->shape[d] = shape[d];
	}
	contig_strides(t);
	kgb_tensor_finish(t);
	t->gen = KGB_GEN_DEFAULT;
	t->lo = -1.0;
	t->hi = 1.0;
	return t;
}

/* Re-stride t. "contig": row-major. "transposed": the memory of a contiguous tensor
 * whose last two dims are swapped (a .t() view). "strided": inner stride 2 and one
 * element of padding after every row (and every higher-dim block). Returns 0, or -1
 * for an unknown layout name. */
int kgb_tensor_layout(kgb_tensor_t *t, const char *layout)
{
	int n = t->ndim;
	if (strcmp(layout, "contig") == 0 || strcmp(layout, "contiguous") == 0) {
		contig_strides(t);
	} else if (strcmp(layout, "transposed") == 0) {
		int64_t s;
		contig_strides(t);
		if (n >= 2) {
			int64_t r = KGB_MAX(t->shape[n - 2], 1), cc = KGB_MAX(t->shape[n - 1], 1);
			t->stride[n - 2] = 1;
			t->stride[n - 1] = r;
			s = r * cc;
			for (int d = n - 3; d >= 0; d--) {
				t->stride[d] = s;
				s *= KGB_MAX(t->shape[d], 1);
			}
		}
	} else if (strcmp(layout, "strided") == 0) {
		if (n >= 1) {
			t->stride[n - 1] = 2;
			for (int d = n - 2; d >= 0; d--)
				t->stride[d] = t->stride[d + 1] * KGB_MAX(t->shape[d + 1], 1) + 1;
		}
	} else {
		return -1;
	}
	kgb_tensor_finish(t);
	return 0;
}

/* Add a scalar passed to kernels as dt; its value is rounded to dt (the reference
 * sees what the kernel receives). Aborts past KGB_MAX_SCALARS. */
kgb_scalar_t *kgb_case_add_scalar(kgb_case_t *c, const char *name, kgb_dtype_t dt, double v)
{
	kgb_scalar_t *s;
	KGB_ASSERT_MSG(c->nscalars < KGB_MAX_SCALARS, "op %s: too many scalars", c->op->name);
	s = &c->s[c->nscalars++];
	s->name = name;
	s->dtype = dt;
	s->value = kgb_dtype_round(dt, v);   /* what the kernel receives */
	return s;
}

/* Set an integer symbol for plan expressions (overrides a grid parameter's value). */
void kgb_case_set_sym(kgb_case_t *c, const char *name, int64_t v)
{
	KGB_ASSERT(c->sym != NULL);
	kgb_symtab_set_int(c->sym, name, v);
}

/* Index of the tensor named `name`, or -1. */
int kgb_case_tensor_index(const kgb_case_t *c, const char *name)
{
	for (int i = 0; i < c->ntensors; i++)
		if (strcmp(c->t[i].name, name) == 0)
			return i;
	return -1;
}

/* The tensor named `name`, or NULL. Points into c. */
kgb_tensor_t *kgb_case_tensor(const kgb_case_t *c, const char *name)
{
	int i = kgb_case_tensor_index(c, name);
	return i < 0 ? NULL : (kgb_tensor_t *)&c->t[i];
}

/* Default tolerance: see the header, and docs/adding-an-operator.md for why atol is
 * relative to the largest reference magnitude: a fixed atol (1e-4 in the public
 * harness) lets all-zeros pass whenever the outputs are small (softmax over 40000
 * columns gives ~2.5e-5), while a term proportional to max|ref| keeps the bar at
 * the same relative height for every output scale and still covers elements that
 * cancel to near zero. */
void kgb_case_default_tol(kgb_case_t *c)
{
	kgb_dtype_t dt = KGB_DT_F32;
	double base, s, n = c->reduce_len > 1 ? c->reduce_len : 1;
	for (int i = 0; i < c->ntensors; i++) {
		if (c->t[i].role != KGB_ROLE_IN) {
			dt = c->t[i].dtype;
			break;
		}
	}
	/* complex outputs: the bar of their component type, applied by the validator
	 * to the modulus of the error (validate.c) */
	dt = kgb_dtype_component(dt);
	/* The length used for the growth of the tolerance is capped: a float-accumulating
	 * kernel's error grows with the reduction, but for fp16/bf16 outputs the final
	 * rounding dominates, and without a cap a long reduction would loosen the bar
	 * until a wrong answer passes (16 for half types; 4096 for fp32, rtol <= 6.4e-4). */
	if (dt == KGB_DT_F16 || dt == KGB_DT_BF16)
		n = KGB_MIN(n, 16.0);
	else if (dt == KGB_DT_F32)
		n = KGB_MIN(n, 4096.0);
	s = sqrt(n);
	switch (dt) {
	case KGB_DT_F16: base = 1e-3; c->rtol = base; break;
	case KGB_DT_BF16: base = 1.6e-2; c->rtol = base; break;
	case KGB_DT_F32: base = 1e-5; c->rtol = base * s; break;
	case KGB_DT_F64: base = 1e-9; c->rtol = base * s; break;
	default:
		c->rtol = 0;
		c->atol_rel = 0;
		return;
	}
	/* never more than 5% of the largest magnitude: all-zeros and constants must
	 * always fail, however long the reduction (bf16 over 1e6 elements would give 1.6) */
	c->atol_rel = KGB_MIN(base * s * 0.1, 0.05);
}

/* ---- parameters ---- */

/* The case's value of grid parameter `name`, or NULL. */
const kgb_pval_t *kgb_case_param(const kgb_case_t *c, const char *name)
{
	const kgb_grid_spec_t *gs = &c->op->grids[c->grid];
	for (int p = 0; p < KGB_MAX_PARAMS && gs->params[p].name; p++)
		if (strcmp(gs->params[p].name, name) == 0)
			return c->pv[p];
	return NULL;
}

/* Integer value of parameter `name` (dflt if absent or not a number). */
int64_t kgb_case_pint(const kgb_case_t *c, const char *name, int64_t dflt)
{
	const kgb_pval_t *p = kgb_case_param(c, name);
	if (!p || (p->kind != KGB_PV_INT && p->kind != KGB_PV_FLOAT))
		return dflt;
	return p->i;
}

/* Float value of parameter `name` (dflt if absent or not a number). */
double kgb_case_pfloat(const kgb_case_t *c, const char *name, double dflt)
{
	const kgb_pval_t *p = kgb_case_param(c, name);
	if (!p || (p->kind != KGB_PV_INT && p->kind != KGB_PV_FLOAT))
		return dflt;
	return p->f;
}

/* Text of parameter `name` as written (dflt if absent). Points into the catalog. */
const char *kgb_case_pstr(const kgb_case_t *c, const char *name, const char *dflt)
{
	const kgb_pval_t *p = kgb_case_param(c, name);
	return p ? p->s : dflt;
}

/* ---- case building ---- */

/* overload.NAME for every overload of the operator, has.NAME for every optional
 * tensor (see catalog.h). */
static void fill_variant_symbols(kgb_case_t *c)
{
	const char *names[KGB_MAX_OVERLOADS];
	const char *own = kgb_case_pstr(c, KGB_OVERLOAD_PARAM, NULL);
	char name[96];
	int n = kgb_op_overloads(c->op, names, NULL);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, KGB_OVERLOAD_PARAM ".%s", names[i]);
		kgb_symtab_set_int(c->sym, name, own && strcmp(own, names[i]) == 0);
	}
	for (const char *p = c->op->optional; p && *p;) {
		size_t len = strcspn(p, " ");
		if (len > 0 && len < 64) {
			char tn[64];
			memcpy(tn, p, len);
			tn[len] = '\0';
			snprintf(name, sizeof name, "has.%s", tn);
			kgb_symtab_set_int(c->sym, name, kgb_case_tensor_index(c, tn) >= 0);
		}
		p += len;
		p += strspn(p, " ");
	}
}

static void fill_symbols(kgb_case_t *c)
{
	char name[96];
	kgb_value_t v;
	const kgb_grid_spec_t *gs = &c->op->grids[c->grid];
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *t = &c->t[i];
#define SETI(fmt, ...) do { snprintf(name, sizeof name, fmt, __VA_ARGS__); kgb_symtab_set_int(c->sym, name, v_); } while (0)
		int64_t v_, rows = 1;
		for (int d = 0; d + 1 < t->ndim; d++)
			rows *= t->shape[d];
		v_ = (int64_t)t->numel; SETI("%s.numel", t->name);
		v_ = t->ndim; SETI("%s.ndim", t->name);
		v_ = (int64_t)t->storage; SETI("%s.storage", t->name);
		v_ = rows; SETI("%s.rows", t->name);
		v_ = t->ndim ? t->shape[t->ndim - 1] : 1; SETI("%s.cols", t->name);
		for (int d = 0; d < t->ndim; d++) {
			v_ = t->shape[d]; SETI("%s.size%d", t->name, d);
			v_ = t->stride[d]; SETI("%s.stride%d", t->name, d);
		}
		/* padded view for rank-generic plans: dims past ndim have size 1, stride 0 */
		for (int d = t->ndim; d < KGB_MAX_DIMS; d++) {
			v_ = 1; SETI("%s.size%d", t->name, d);
			v_ = 0; SETI("%s.stride%d", t->name, d);
		}
#undef SETI
		snprintf(name, sizeof name, "%s.dtype", t->name);
		kgb_symtab_set_str(c->sym, name, kgb_dtype_name(t->dtype));
	}
	for (int i = 0; i < c->nscalars; i++) {
		const kgb_scalar_t *s = &c->s[i];
		if (kgb_dtype_is_float(s->dtype))
			kgb_symtab_set_float(c->sym, s->name, s->value);
		else
			kgb_symtab_set_int(c->sym, s->name, (int64_t)s->value);
	}
	for (int p = 0; p < KGB_MAX_PARAMS && gs->params[p].name; p++) {
		const kgb_pval_t *pv = c->pv[p];
		const char *pn = gs->params[p].name;
		if (kgb_symtab_get(c->sym, pn, &v) || kgb_symtab_get_str(c->sym, pn))
			continue;   /* setup (or a scalar) already defined it */
		if (pv->kind == KGB_PV_INT)
			kgb_symtab_set_int(c->sym, pn, pv->i);
		else if (pv->kind == KGB_PV_FLOAT)
			kgb_symtab_set_float(c->sym, pn, pv->f);
		else if (pv->kind == KGB_PV_STR)
			kgb_symtab_set_str(c->sym, pn, pv->s);
	}
}

static int check_tensors(const kgb_case_t *c, char *err, size_t errlen)
{
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *t = &c->t[i];
		kgb_tensor_t tmp = *t;
		kgb_tensor_finish(&tmp);
		if (tmp.numel != t->numel)
			return kgb_err(err, errlen, "op %s case %u tensor %s: numel %zu does not match its shape (%zu)",
			               c->op->name, c->index, t->name, t->numel, tmp.numel);
		if (t->storage < tmp.storage)
			return kgb_err(err, errlen, "op %s case %u tensor %s: storage %zu smaller than the view's span %zu",
			               c->op->name, c->index, t->name, t->storage, tmp.storage);
		for (int d = 0; d < t->ndim; d++)
			if (t->stride[d] < 0)
				return kgb_err(err, errlen, "op %s case %u tensor %s: negative stride", c->op->name,
				               c->index, t->name);
	}
	return 0;
}

/* Build case `index` of op: pick the grid point, run setup, fill the default
 * tolerance (unless setup set one), the symbols and the label. c is caller storage;
 * on success the caller releases it with kgb_case_release (on failure nothing needs
 * releasing). Returns 0 or -1 with err filled. */
/* Case `index`'s grid and parameter values into c (op, index, grid, pv). Returns the
 * grid, or -1 when index is out of range. */
static int pick_point(const kgb_op_t *op, uint32_t index, kgb_case_t *c)
{
	pop_t *po = find_pop(op);
	uint32_t rem = index;
	int g = 0;
	if (index >= po->ncases)
		return -1;
	while (rem >= po->g[g].ncases) {
		rem -= po->g[g].ncases;
		g++;
	}
	const pgrid_t *pg = &po->g[g];
	c->op = op;
	c->index = index;
	c->grid = g;
	for (int p = pg->nparams - 1; p >= 0; p--) {
		uint32_t k = rem % (uint32_t)pg->nvals[p];
		rem /= (uint32_t)pg->nvals[p];
		c->pv[p] = &pg->vals[p][k];
	}
	return g;
}

/* "name=value ..." of the point pick_point chose, into out. */
static void write_label(const kgb_case_t *c, char *out, size_t outlen)
{
	const pgrid_t *pg = &find_pop(c->op)->g[c->grid];
	size_t llen = 0;
	if (outlen)
		out[0] = 0;
	for (int p = 0; p < pg->nparams; p++) {
		const char *pn = c->op->grids[c->grid].params[p].name;
		bool ovl = strcmp(pn, KGB_OVERLOAD_PARAM) == 0;
		int w = snprintf(out + llen, outlen - llen, "%s%s=%s%s%s", p ? " " : "", pn, ovl ? c->op->name : "",
		                 ovl ? "." : "", c->pv[p]->s);
		if (w < 0 || (size_t)w >= outlen - llen)
			break;
		llen += (size_t)w;
	}
}

/* See catalog.h. */
int kgb_case_label(const kgb_op_t *op, uint32_t index, char *out, size_t outlen)
{
	kgb_case_t c;
	memset(&c, 0, sizeof c);
	if (pick_point(op, index, &c) < 0)
		return -1;
	write_label(&c, out, outlen);
	return 0;
}

/* Set up the point c holds (pick_point, or a held-out point): tensors, tolerance,
 * symbols, label. Returns 0 or -1 with err (the symbol table released). */
static int setup_point(const kgb_op_t *op, kgb_case_t *c, char *err, size_t errlen)
{
	c->rtol = -1;
	c->atol_rel = -1;
	c->reduce_len = 1;
	c->allow_nan = true;
	c->sym = kgb_symtab_new();
	if (op->setup(c, err, errlen) != 0)
		goto fail;
	if (check_tensors(c, err, errlen) != 0)
		goto fail;
	if (c->rtol < 0 || c->atol_rel < 0) {
		double r = c->rtol, a = c->atol_rel;
		kgb_case_default_tol(c);
		if (r >= 0)
			c->rtol = r;
		if (a >= 0)
			c->atol_rel = a;
	}
	fill_symbols(c);
	fill_variant_symbols(c);
	write_label(c, c->label, sizeof c->label);
	return 0;
fail:
	kgb_symtab_destroy(&c->sym);
	return -1;
}

int kgb_case_build(const kgb_op_t *op, uint32_t index, kgb_case_t *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	if (pick_point(op, index, c) < 0)
		return kgb_err(err, errlen, "op %s: case %u out of range (it has %u cases%s)", op->name, index,
		               find_pop(op)->ncases, kgb_op_has_heldout(op) ? "; a held-out case needs the campaign's key"
		                                                            : "");
	return setup_point(op, c, err, errlen);
}

/* ---- held-out cases ---- */

bool kgb_op_has_heldout(const kgb_op_t *op)
{
	return find_pop(op)->heldout[0] != '\0';
}

const char *kgb_op_heldout_params(const kgb_op_t *op)
{
	const pop_t *po = find_pop(op);
	return po->heldout[0] ? po->heldout : NULL;
}

const char *kgb_op_no_heldout_reason(const kgb_op_t *op)
{
	return find_pop(op)->no_heldout;
}

uint32_t kgb_heldout_index(const kgb_op_t *op, uint32_t base, uint32_t h)
{
	return find_pop(op)->ncases + base * KGB_HELDOUT_MAX + h;
}

/* Whether the held-out parameters of op name grid parameter pn. */
static bool heldout_param(const kgb_op_t *op, const char *pn)
{
	return in_words(find_pop(op)->heldout, pn);
}

/* Whether v equals a value of parameter pn in any grid of op. */
static bool public_value(const kgb_op_t *op, const char *pn, const kgb_pval_t *v)
{
	const pop_t *po = find_pop(op);
	for (int g = 0; g < po->ngrids; g++)
		for (int p = 0; p < po->g[g].nparams; p++) {
			if (strcmp(op->grids[g].params[p].name, pn) != 0)
				continue;
			for (int k = 0; k < po->g[g].nvals[p]; k++) {
				const kgb_pval_t *w = &po->g[g].vals[p][k];
				if (w->kind == v->kind && w->kind == KGB_PV_SHAPE && w->ndim == v->ndim &&
				    memcmp(w->dims, v->dims, (size_t)v->ndim * sizeof v->dims[0]) == 0)
					return true;
				if (w->kind == v->kind && w->kind == KGB_PV_INT && w->i == v->i)
					return true;
			}
		}
	return false;
}

/* Resize value v (a copy in the case) to sizes outside the public list; false if it
 * has nothing of 2 or more to grow. */
static bool resize_value(const kgb_op_t *op, const char *pn, kgb_pval_t *v, kgb_rng_t *rng)
{
	kgb_pval_t orig = *v;
	for (int tries = 0; tries < 32; tries++) {
		bool any = false;
		*v = orig;
		if (v->kind == KGB_PV_SHAPE) {
			size_t l = 0;
			l += (size_t)snprintf(v->s + l, sizeof v->s - l, "[");
			for (int d = 0; d < v->ndim; d++) {
				if (v->dims[d] >= 2) {
					/* odd: a multiple of no block size */
					v->dims[d] = (v->dims[d] + 1 + (int64_t)(kgb_rng_next(rng) % 15)) | 1;
					any = true;
				}
				if (l < sizeof v->s)
					l += (size_t)snprintf(v->s + l, sizeof v->s - l, "%s%lld", d ? "," : "",
					                      (long long)v->dims[d]);
			}
			if (l < sizeof v->s)
				snprintf(v->s + l, sizeof v->s - l, "]");
		} else if (v->kind == KGB_PV_INT && v->i >= 2) {
			v->i += 1 + (int64_t)(kgb_rng_next(rng) % 15);
			v->f = (double)v->i;
			snprintf(v->s, sizeof v->s, "%lld", (long long)v->i);
			any = true;
		}
		if (!any)
			return false;
		if (!public_value(op, pn, v))
			return true;
	}
	return false;
}

int kgb_case_build_keyed(const kgb_op_t *op, uint32_t index, uint64_t key, kgb_case_t *c, char *err, size_t errlen)
{
	uint32_t n = kgb_op_case_count(op);
	if (index < n || !kgb_op_has_heldout(op) || (index - n) / KGB_HELDOUT_MAX >= n)
		return kgb_case_build(op, index, c, err, errlen);
	uint32_t base = (index - n) / KGB_HELDOUT_MAX, h = (index - n) % KGB_HELDOUT_MAX;
	char lerr[256] = "";
	/* a base with nothing to resize, or whose resized sizes its setup refuses, passes
	 * to the next case */
	for (uint32_t step = 0; step < n; step++) {
		uint32_t b = (base + step) % n;
		uint64_t words[3] = {b, h, key};
		kgb_rng_t rng;
		kgb_rng_seed(&rng, kgb_hash64(words, sizeof words, kgb_hash64(op->name, strlen(op->name), 0x68656c64)));
		for (int attempt = 0; attempt < 4; attempt++) {
			bool resized = false;
			memset(c, 0, sizeof *c);
			pick_point(op, b, c);
			const pgrid_t *pg = &find_pop(op)->g[c->grid];
			for (int p = 0; p < pg->nparams; p++) {
				const char *pn = op->grids[c->grid].params[p].name;
				if (!heldout_param(op, pn))
					continue;
				c->hv[p] = *c->pv[p];
				if (resize_value(op, pn, &c->hv[p], &rng)) {
					c->pv[p] = &c->hv[p];
					resized = true;
				}
			}
			if (!resized)
				break;
			c->index = index;
			c->heldout = true;
			c->heldout_key = key;
			c->heldout_base = b;
			if (setup_point(op, c, lerr, sizeof lerr) == 0) {
				char head[32];
				c->timed = false; /* only its verdict counts */
				int hl = snprintf(head, sizeof head, "heldout=%u of=%u ", h, b);
				size_t ll = strnlen(c->label, sizeof c->label - 1 - (size_t)hl);
				memmove(c->label + hl, c->label, ll);
				memcpy(c->label, head, (size_t)hl);
				c->label[(size_t)hl + ll] = '\0';
				return 0;
			}
		}
	}
	memset(c, 0, sizeof *c);
	return kgb_err(err, errlen, "op %s: held-out case %u of case %u: no case resizes (%s)", op->name, h, base,
	               lerr[0] ? lerr : "nothing to resize");
}

/* Free what kgb_case_build allocated (the symbol table). Safe to call twice. */
void kgb_case_release(kgb_case_t *c)
{
	if (c)
		kgb_symtab_destroy(&c->sym);
}

/* ---- indexing ---- */

/* Advance idx over t's shape in row-major order; false after the last element. */
bool kgb_index_next(const kgb_tensor_t *t, int64_t *idx)
{
	for (int d = t->ndim - 1; d >= 0; d--) {
		if (++idx[d] < t->shape[d])
			return true;
		idx[d] = 0;
	}
	return false;
}

/* Storage offset of the element with row-major flat index `flat`. */
size_t kgb_tensor_flat_offset(const kgb_tensor_t *t, size_t flat)
{
	size_t off = 0;
	for (int d = t->ndim - 1; d >= 0; d--) {
		size_t n = (size_t)t->shape[d];
		if (n == 0)
			return 0;
		off += (flat % n) * (size_t)t->stride[d];
		flat /= n;
	}
	return off;
}

/* ---- inputs ---- */

static uint64_t tensor_seed(const kgb_case_t *c, uint64_t seed, const char *tname, const char *what)
{
	uint8_t buf[256];
	size_t n = 0, l;
	uint32_t idx = c->index;
	l = strlen(c->op->name) + 1;
	if (l > 100)
		l = 100;
	memcpy(buf + n, c->op->name, l);
	n += l;
	for (int i = 0; i < 4; i++)
		buf[n++] = (uint8_t)(idx >> (8 * i));
	for (int i = 0; i < 8; i++)
		buf[n++] = (uint8_t)(seed >> (8 * i));
	l = strlen(tname) + 1;
	if (l > 100)
		l = 100;
	memcpy(buf + n, tname, l);
	n += l;
	l = strlen(what);
	if (l > 30)
		l = 30;
	memcpy(buf + n, what, l);
	n += l;
	return kgb_hash64(buf, n, 0x6b67622d67656eull);
}

/* The value gaps of an input buffer hold (never read by a correct kernel). */
static double gap_filler(kgb_dtype_t dt)
{
	return kgb_dtype_is_float(dt) || kgb_dtype_is_complex(dt) ? -3.0 : 0.0;
}

static void gen_tensor(const kgb_case_t *c, const kgb_tensor_t *t, uint64_t seed, double *v)
{
	kgb_rng_t rng, prng;
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	double scale = 1, shift = 0, shift_im = 0;
	size_t k = 0;
	size_t *perm = NULL;
	kgb_gen_t gen = t->gen;
	int lanes = kgb_dtype_lanes(t->dtype);
	bool isf = kgb_dtype_is_float(t->dtype) || lanes == 2;
	for (size_t i = 0; i < t->storage * (size_t)lanes; i++)
		v[i] = gap_filler(t->dtype);
	if (t->numel == 0)
		return;
	kgb_rng_seed(&rng, tensor_seed(c, seed, t->name, ""));
	/* scale and shift are per (seed, tensor), not per case: a kernel cannot learn
	 * them from one case and replay them */
	{
		uint8_t b[128];
		size_t l = strlen(t->name);
		if (l > 100)
			l = 100;
		memcpy(b, t->name, l);
		for (int i = 0; i < 8; i++)
			b[l + (size_t)i] = (uint8_t)(seed >> (8 * i));
		kgb_rng_seed(&prng, kgb_hash64(b, l + 8, 0x7363616c65ull));
		scale = 0.5 + 1.5 * kgb_rng_uniform(&prng);
		shift = 0.25 + 0.75 * kgb_rng_uniform(&prng);
		if (kgb_rng_uniform(&prng) < 0.5)
			shift = -shift;
		/* complex: the imaginary parts get a shift of their own (drawn after the
		 * real-valued ones, so real tensors keep their values) */
		if (lanes == 2) {
			shift_im = 0.25 + 0.75 * kgb_rng_uniform(&prng);
			if (kgb_rng_uniform(&prng) < 0.5)
				shift_im = -shift_im;
		}
	}
	if (gen == KGB_GEN_DEFAULT && t->dtype == KGB_DT_BOOL)
		gen = KGB_GEN_BOOL;
	if (gen == KGB_GEN_PERM) {
		perm = kgb_xmalloc(t->numel * sizeof *perm);
		for (size_t i = 0; i < t->numel; i++)
			perm[i] = i;
		for (size_t i = t->numel - 1; i > 0; i--) {
			size_t j = (size_t)(kgb_rng_next(&rng) % (uint64_t)(i + 1));
			size_t tmp = perm[i];
			perm[i] = perm[j];
			perm[j] = tmp;
		}
	}
	do {
		double x = 0, xi = 0;
		switch (gen) {
		case KGB_GEN_DEFAULT:
			if (isf) {
				x = (2.0 * kgb_rng_uniform(&rng) - 1.0) * scale + shift;
				if (lanes == 2)
					xi = (2.0 * kgb_rng_uniform(&rng) - 1.0) * scale + shift_im;
			} else {
				int64_t lo = t->dtype == KGB_DT_U8 ? 0 : -8, hi = t->dtype == KGB_DT_U8 ? 16 : 8;
				x = (double)(lo + (int64_t)(kgb_rng_next(&rng) % (uint64_t)(hi - lo + 1)));
			}
			break;
		case KGB_GEN_UNIFORM:
			x = t->lo + (t->hi - t->lo) * kgb_rng_uniform(&rng);
			if (lanes == 2)
				xi = t->lo + (t->hi - t->lo) * kgb_rng_uniform(&rng);
			break;
		case KGB_GEN_NORMAL:
			x = t->lo + t->hi * kgb_rng_normal(&rng);
			if (lanes == 2)
				xi = t->lo + t->hi * kgb_rng_normal(&rng);
			break;
		case KGB_GEN_INT: {
			int64_t lo = (int64_t)t->lo, hi = (int64_t)t->hi;
			uint64_t span = hi >= lo ? (uint64_t)(hi - lo) + 1 : 1;
			x = (double)(lo + (int64_t)(kgb_rng_next(&rng) % span));
			break;
		}
		case KGB_GEN_BOOL: {
			double p = t->lo > 0 ? t->lo : 0.5;
			x = kgb_rng_uniform(&rng) < p ? 1.0 : 0.0;
			break;
		}
		case KGB_GEN_PERM:
			x = (double)perm[k];
			break;
		case KGB_GEN_ZERO:
			x = 0;
			break;
		}
		if (lanes == 2) {
			size_t o = 2 * kgb_tensor_offset(t, idx);
			v[o] = kgb_dtype_round(t->dtype, x);
			v[o + 1] = kgb_dtype_round(t->dtype, xi);   /* 0 for the integer rules */
		} else {
			v[kgb_tensor_offset(t, idx)] = kgb_dtype_round(t->dtype, x);
		}
		k++;
	} while (kgb_index_next(t, idx));
	free(perm);
}

static void round_view(const kgb_tensor_t *t, double *v)
{
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	int lanes = kgb_dtype_lanes(t->dtype);
	if (t->numel == 0)
		return;
	do {
		size_t o = kgb_tensor_offset(t, idx) * (size_t)lanes;
		for (int l = 0; l < lanes; l++)
			v[o + (size_t)l] = kgb_dtype_round(t->dtype, v[o + (size_t)l]);
	} while (kgb_index_next(t, idx));
}

/* Generate the inputs of (case, seed) into b (see the header). Returns 0. */
int kgb_case_inputs(const kgb_case_t *c, uint64_t seed, kgb_hostbufs_t *b, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	memset(b, 0, sizeof *b);
	b->n = c->ntensors;
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *t = &c->t[i];
		b->v[i] = kgb_xcalloc((t->storage ? t->storage : 1) * (size_t)kgb_dtype_lanes(t->dtype),
		                      sizeof(double));
		if (t->role != KGB_ROLE_OUT)
			gen_tensor(c, t, seed, b->v[i]);
	}
	if (c->op->gen_inputs) {
		kgb_rng_t rng;
		kgb_rng_seed(&rng, tensor_seed(c, seed, "", "rule"));
		c->op->gen_inputs(c, &rng, b);
		for (int i = 0; i < c->ntensors; i++)
			if (c->t[i].role != KGB_ROLE_OUT)
				round_view(&c->t[i], b->v[i]);
	}
	return 0;
}

/* Free the buffers of b (safe on a zeroed or released b). */
void kgb_hostbufs_release(kgb_hostbufs_t *b)
{
	if (!b)
		return;
	for (int i = 0; i < KGB_MAX_TENSORS; i++) {
		free(b->v[i]);
		b->v[i] = NULL;
	}
	b->n = 0;
}

/* ---- reference cache ----
 * A content-addressed store of (inputs, reference) per (catalog version, operator,
 * case, seed, held-out key), shared by every job and process of a machine that has the
 * same KGB_CACHE_DIR (docs/references.md, "The reference cache").
 *
 * File $KGB_CACHE_DIR/ref/<catalog version>/<h[0:2]>/<h>.bin, h the SHA-256 of the key
 * (so a listing names no operator, case or seed), directories 0700, files 0600: header
 * (magic, key hash, section count, payload length, payload checksum) then sections,
 * each a tensor's index, what it holds (its inputs, or its reference), the dtype its
 * values are stored in, its number of components (storage elements times lanes) and
 * the values, in the tensor's own dtype or as doubles (cache_dtype). Writers
 * write a private temporary file in the same directory and rename it into place, so a
 * reader sees a whole entry or none; a truncated or altered entry (length, checksum,
 * key or sections that do not match) is recomputed and rewritten. */

#define REF_MAGIC "KGBREF05"

enum { SEC_INPUT = 1, SEC_REF = 2 };

typedef struct ref_header {
	char magic[8];
	char keyhash[64];      /* hex SHA-256 of the key */
	uint32_t nsections;
	uint32_t reserved;
	uint64_t payload_len;
	uint64_t checksum;
} ref_header_t;

typedef struct ref_entry {
	uint32_t index;
	uint16_t what;         /* SEC_INPUT or SEC_REF */
	uint16_t dtype;        /* kgb_dtype_t of the stored values (f64: doubles) */
	uint64_t count;        /* components: storage * lanes */
} ref_entry_t;

/* The dtype values v of tensor t are cached in. Inputs: their own (they are generated
 * rounded to it, and uploaded packed in it), unless a value is a NaN, whose sign and
 * payload a float dtype may not keep: then f64. References:
 * their own (the validator rounds the reference to the output dtype before every use,
 * so the rounded values judge exactly as the doubles did), unless the operator has its
 * own check and some value does not survive the rounding. */
static kgb_dtype_t cache_dtype(const kgb_case_t *c, const kgb_tensor_t *t, int what, const double *v)
{
	kgb_dtype_t dt = kgb_dtype_component(t->dtype);
	size_t n = t->storage * (size_t)kgb_dtype_lanes(t->dtype);
	if (what == SEC_REF) {
		if (c->op->check)
			for (size_t i = 0; i < n; i++)
				if (kgb_dtype_round(dt, v[i]) != v[i] && !isnan(v[i]))
					return KGB_DT_F64;
		return dt;
	}
	bool nan = false;
	for (size_t i = 0; i < n; i++)
		nan |= v[i] != v[i];
	return nan && dt != KGB_DT_F64 ? KGB_DT_F64 : dt;
}

/* The entries' checksum: four independent lanes of 64-bit words (several times faster
 * than a byte-wise hash on the megabytes of an entry), the tail byte by byte. */
static uint64_t cache_sum(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h[4] = { 0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull, 0x27D4EB2F165667C5ull };
	size_t i = 0;
	for (; i + 32 <= len; i += 32)
		for (int k = 0; k < 4; k++) {
			uint64_t w;
			memcpy(&w, p + i + 8 * k, 8);
			h[k] = (h[k] ^ w) * 0x100000001b3ull;
			h[k] ^= h[k] >> 29;
		}
	uint64_t r = (uint64_t)len;
	for (int k = 0; k < 4; k++)
		r = (r ^ h[k]) * 0xff51afd7ed558ccdull;
	return kgb_hash64(p + i, len - i, r);
}

/* The bytes a section's values take: padded to 8, so that every section's values (and
 * the next section) start aligned for their dtype, whatever the one before holds (a
 * bool mask of an odd count before a float16 tensor). */
static size_t section_bytes(uint64_t count, kgb_dtype_t dt)
{
	return ((size_t)count * kgb_dtype_size(dt) + 7) & ~(size_t)7;
}

/* n values of dtype dt at src into doubles (the common dtypes without a call each) */
static void load_values(kgb_dtype_t dt, const uint8_t *src, size_t n, double *dst)
{
	if (dt == KGB_DT_F64) {
		memcpy(dst, src, n * sizeof(double));
	} else if (dt == KGB_DT_F32) {
		for (size_t j = 0; j < n; j++) {
			float f;
			memcpy(&f, src + 4 * j, 4);
			dst[j] = f;
		}
	} else {
		for (size_t j = 0; j < n; j++)
			dst[j] = kgb_dtype_load(dt, src, j);
	}
}

static pthread_mutex_t g_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_written_since_scan;
static bool g_scanned;
static uint64_t g_hits, g_misses, g_inputs_ns;

/* See the header. */
void kgb_ref_cache_counts(uint64_t *hits, uint64_t *misses)
{
	*hits = __atomic_load_n(&g_hits, __ATOMIC_RELAXED);
	*misses = __atomic_load_n(&g_misses, __ATOMIC_RELAXED);
}

/* See the header. */
uint64_t kgb_inputs_ns(void)
{
	return __atomic_load_n(&g_inputs_ns, __ATOMIC_RELAXED);
}

static uint64_t cache_limit_bytes(void)
{
	const char *s = getenv("KGB_REF_CACHE_MB");
	char *end;
	long long mb;
	if (!s || !*s)
		return (uint64_t)KGB_REF_CACHE_MB_DEFAULT << 20;
	mb = strtoll(s, &end, 10);
	if (*end || mb < 0) {
		log_warn("KGB_REF_CACHE_MB='%s' is not a number of MiB; using %d", s, KGB_REF_CACHE_MB_DEFAULT);
		return (uint64_t)KGB_REF_CACHE_MB_DEFAULT << 20;
	}
	return (uint64_t)mb << 20;
}

/* See the header. */
char *kgb_ref_cache_root(void)
{
	const char *d = getenv("KGB_CACHE_DIR");
	const char *home = getenv("HOME");
	if (d && *d)
		return kgb_xasprintf("%s/ref", d);
	if (home && *home)
		return kgb_xasprintf("%s/.cache/kgb/ref", home);
	return kgb_xstrdup(".kgb-cache/ref");
}

/* The key's hash: everything the inputs and the reference depend on. */
static void case_key(const kgb_case_t *c, uint64_t seed, char out[65])
{
	kgb_sha256_t h;
	char head[256];
	int n = snprintf(head, sizeof head, "%s\n%s\n%u\n%llu\n%d:%llu\n%d\n", kgb_catalog_version(), c->op->name,
	                 c->index, (unsigned long long)seed, (int)c->heldout, (unsigned long long)c->heldout_key,
	                 c->ntensors);
	kgb_sha256_init(&h);
	kgb_sha256_update(&h, head, (size_t)n);
	kgb_sha256_update(&h, c->label, strnlen(c->label, sizeof c->label));
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *t = &c->t[i];
		int32_t words[3] = { (int32_t)t->role, (int32_t)t->dtype, t->ndim };
		kgb_sha256_update(&h, words, sizeof words);
		kgb_sha256_update(&h, t->shape, sizeof(int64_t) * (size_t)t->ndim);
		kgb_sha256_update(&h, t->stride, sizeof(int64_t) * (size_t)t->ndim);
		uint64_t st = t->storage;
		kgb_sha256_update(&h, &st, sizeof st);
	}
	kgb_sha256_final_hex(&h, out);
}

static char *entry_path(const char *root, const char *kh)
{
	return kgb_xasprintf("%s/%s/%.2s/%s.bin", root, kgb_catalog_version(), kh, kh);
}

/* See the header. */
char *kgb_ref_cache_path(const kgb_case_t *c, uint64_t seed)
{
	char kh[65];
	char *root = kgb_ref_cache_root();
	case_key(c, seed, kh);
	char *p = entry_path(root, kh);
	free(root);
	return p;
}

static bool holds(const kgb_tensor_t *t, int what)
{
	return what == SEC_INPUT ? t->role != KGB_ROLE_OUT : t->role != KGB_ROLE_IN;
}

/* Load the entry at path into ref (inputs of IN tensors, references of the others)
 * and in (inputs of IN and INOUT tensors, zeros for OUT; NULL: not wanted); both
 * allocated as kgb_case_inputs does. Returns 0, or -1 with a reason (nothing
 * allocated then). */
static int cache_load(const char *path, const char *kh, const kgb_case_t *c, kgb_hostbufs_t *ref,
                      kgb_hostbufs_t *in, char *why, size_t whylen)
{
	size_t len = 0, off;
	char *buf = kgb_read_file(path, &len, why, whylen);
	ref_header_t h;
	int rc = -1;
	bool seen[KGB_MAX_TENSORS][3];
	memset(seen, 0, sizeof seen);
	memset(ref, 0, sizeof *ref);
	if (in)
		memset(in, 0, sizeof *in);
	if (!buf)
		return -1;
	if (len < sizeof h) {
		kgb_err(why, whylen, "truncated header (%zu bytes)", len);
		goto out;
	}
	memcpy(&h, buf, sizeof h);
	if (memcmp(h.magic, REF_MAGIC, 8) != 0) {
		kgb_err(why, whylen, "bad magic");
		goto out;
	}
	if (memcmp(h.keyhash, kh, 64) != 0) {
		kgb_err(why, whylen, "the entry is another key's");
		goto out;
	}
	if (h.payload_len != len - sizeof h) {
		kgb_err(why, whylen, "payload is %zu bytes, header says %llu", len - sizeof h,
		        (unsigned long long)h.payload_len);
		goto out;
	}
	if (cache_sum(buf + sizeof h, len - sizeof h) != h.checksum) {
		kgb_err(why, whylen, "checksum mismatch");
		goto out;
	}
	ref->n = c->ntensors;
	if (in)
		in->n = c->ntensors;
	for (int i = 0; i < c->ntensors; i++) {
		size_t n = (c->t[i].storage ? c->t[i].storage : 1) * (size_t)kgb_dtype_lanes(c->t[i].dtype);
		ref->v[i] = kgb_xcalloc(n, sizeof(double));
		if (in)
			in->v[i] = kgb_xcalloc(n, sizeof(double));
	}
	off = sizeof h;
	for (uint32_t k = 0; k < h.nsections; k++) {
		ref_entry_t e;
		if (len - off < sizeof e) {
			kgb_err(why, whylen, "truncated section");
			goto out;
		}
		memcpy(&e, buf + off, sizeof e);
		off += sizeof e;
		const kgb_tensor_t *t = e.index < (uint32_t)c->ntensors ? &c->t[e.index] : NULL;
		if (!t || (e.what != SEC_INPUT && e.what != SEC_REF) || !holds(t, e.what) || seen[e.index][e.what] ||
		    e.count != t->storage * (size_t)kgb_dtype_lanes(t->dtype) ||
		    (e.dtype != (uint32_t)kgb_dtype_component(t->dtype) && e.dtype != (uint32_t)KGB_DT_F64) ||
		    (len - off) / kgb_dtype_size((kgb_dtype_t)e.dtype) < e.count ||
		    len - off < section_bytes(e.count, (kgb_dtype_t)e.dtype)) {
			kgb_err(why, whylen, "section %u does not match the case", k);
			goto out;
		}
		seen[e.index][e.what] = true;
		double *dst[2] = { NULL, NULL };
		if (e.what == SEC_INPUT) {
			dst[0] = in ? in->v[e.index] : NULL;
			if (t->role == KGB_ROLE_IN)
				dst[1] = ref->v[e.index];
		} else {
			dst[0] = ref->v[e.index];
		}
		if (dst[0]) {
			load_values((kgb_dtype_t)e.dtype, (const uint8_t *)buf + off, (size_t)e.count, dst[0]);
			if (dst[1])
				memcpy(dst[1], dst[0], (size_t)e.count * sizeof(double));
		} else if (dst[1]) {
			load_values((kgb_dtype_t)e.dtype, (const uint8_t *)buf + off, (size_t)e.count, dst[1]);
		}
		off += section_bytes(e.count, (kgb_dtype_t)e.dtype);
	}
	if (off != len) {
		kgb_err(why, whylen, "trailing bytes");
		goto out;
	}
	for (int i = 0; i < c->ntensors; i++)
		for (int w = SEC_INPUT; w <= SEC_REF; w++)
			if (holds(&c->t[i], w) && !seen[i][w]) {
				kgb_err(why, whylen, "tensor %s has no %s", c->t[i].name, w == SEC_INPUT ? "inputs" : "reference");
				goto out;
			}
	rc = 0;
out:
	if (rc != 0) {
		kgb_hostbufs_release(ref);
		kgb_hostbufs_release(in);
	}
	free(buf);
	return rc;
}

typedef struct cfile { char *path; struct timespec mtime; off_t size; } cfile_t;
static cfile_t *g_scan;
static size_t g_nscan, g_capscan;
static uint64_t g_scan_total;

static int scan_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type != FTW_F)
		return 0;
	if (g_nscan == g_capscan) {
		g_capscan = g_capscan ? g_capscan * 2 : 256;
		g_scan = kgb_xrealloc(g_scan, g_capscan * sizeof *g_scan);
	}
	g_scan[g_nscan].path = kgb_xstrdup(path);
	g_scan[g_nscan].mtime = st->st_mtim;
	g_scan[g_nscan].size = st->st_size;
	g_nscan++;
	g_scan_total += (uint64_t)st->st_size;
	return 0;
}

static int cmp_mtime(const void *a, const void *b)
{
	const cfile_t *x = a, *y = b;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return (x->mtime.tv_nsec > y->mtime.tv_nsec) - (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

/* Remove the least recently used files (a hit touches its entry) until the cache is
 * under 90% of its bound. Call with g_cache_lock held. */
static void cache_evict(const char *root, uint64_t limit)
{
	g_nscan = 0;
	g_scan_total = 0;
	if (nftw(root, scan_cb, 16, FTW_PHYS) != 0)
		return;
	if (g_scan_total > limit) {
		uint64_t target = limit / 10 * 9;
		qsort(g_scan, g_nscan, sizeof *g_scan, cmp_mtime);
		for (size_t i = 0; i < g_nscan && g_scan_total > target; i++) {
			if (unlink(g_scan[i].path) == 0)
				g_scan_total -= (uint64_t)g_scan[i].size;
		}
		log_debug("reference cache trimmed to %llu bytes (bound %llu)",
		         (unsigned long long)g_scan_total, (unsigned long long)limit);
	}
	for (size_t i = 0; i < g_nscan; i++)
		free(g_scan[i].path);
	g_nscan = 0;
}

/* See the header. */
void kgb_ref_cache_trim(void)
{
	char *root = kgb_ref_cache_root();
	pthread_mutex_lock(&g_cache_lock);
	cache_evict(root, cache_limit_bytes());
	pthread_mutex_unlock(&g_cache_lock);
	free(root);
}

/* Write buf to path through a temporary file of its own in the same directory, renamed
 * into place (no fsync: a cache entry lost in a crash is recomputed). */
static int write_entry(const char *path, const void *buf, size_t len)
{
	char *tmp = kgb_xasprintf("%s.tmp.XXXXXX", path);
	int fd = mkstemp(tmp), rc = -1;
	if (fd >= 0) {
		int wrc = kgb_write_all(fd, buf, len);
		if (close(fd) == 0 && wrc == 0 && rename(tmp, path) == 0)
			rc = 0;
		else
			unlink(tmp);
	}
	free(tmp);
	return rc;
}

static size_t put_section(uint8_t *buf, size_t off, int index, int what, kgb_dtype_t dt, const kgb_tensor_t *t,
                          const double *v)
{
	ref_entry_t e;
	memset(&e, 0, sizeof e);
	e.index = (uint32_t)index;
	e.what = (uint16_t)what;
	e.dtype = (uint16_t)dt;
	e.count = t->storage * (size_t)kgb_dtype_lanes(t->dtype);
	if (buf) {
		uint8_t *dst = buf + off + sizeof e;
		memcpy(buf + off, &e, sizeof e);
		memset(dst, 0, section_bytes(e.count, dt));
		if (dt == KGB_DT_F64) {
			memcpy(dst, v, (size_t)e.count * sizeof(double));
		} else if (dt == KGB_DT_F32) {
			for (uint64_t k = 0; k < e.count; k++) {
				float f = (float)v[k];
				memcpy(dst + 4 * k, &f, 4);
			}
		} else {
			for (uint64_t k = 0; k < e.count; k++)
				kgb_dtype_store(dt, dst, (size_t)k, v[k]);
		}
	}
	return sizeof e + section_bytes(e.count, dt);
}

static void cache_store(const char *root, const char *path, const char *kh, const kgb_case_t *c,
                        const kgb_hostbufs_t *in, const kgb_hostbufs_t *ref, uint64_t limit)
{
	size_t payload = 0, off;
	ref_header_t h;
	kgb_dtype_t sdt[KGB_MAX_TENSORS][3];
	for (int i = 0; i < c->ntensors; i++)
		for (int w = SEC_INPUT; w <= SEC_REF; w++)
			if (holds(&c->t[i], w)) {
				const double *v = w == SEC_INPUT ? in->v[i] : ref->v[i];
				sdt[i][w] = cache_dtype(c, &c->t[i], w, v);
				payload += put_section(NULL, 0, i, w, sdt[i][w], &c->t[i], v);
			}
	if (payload + sizeof h > limit)
		return;  /* larger than the whole cache: not worth keeping */
	memset(&h, 0, sizeof h);
	memcpy(h.magic, REF_MAGIC, 8);
	memcpy(h.keyhash, kh, 64);
	h.payload_len = payload;
	uint8_t *buf = kgb_xmalloc(sizeof h + payload);
	off = sizeof h;
	for (int i = 0; i < c->ntensors; i++)
		for (int w = SEC_INPUT; w <= SEC_REF; w++)
			if (holds(&c->t[i], w)) {
				off += put_section(buf, off, i, w, sdt[i][w], &c->t[i], w == SEC_INPUT ? in->v[i] : ref->v[i]);
				h.nsections++;
			}
	h.checksum = cache_sum(buf + sizeof h, payload);
	memcpy(buf, &h, sizeof h);
	char *dir = kgb_xstrdup(path), *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (kgb_mkdirs(dir, 0700) != 0 || write_entry(path, buf, sizeof h + payload) != 0)
		log_warn("op=%s case=%u cannot write reference cache %s: %s", c->op->name, c->index, path,
		         strerror(errno));
	free(dir);
	free(buf);
	pthread_mutex_lock(&g_cache_lock);
	g_written_since_scan += sizeof h + payload;
	if (!g_scanned || g_written_since_scan > limit / 16) {
		g_scanned = true;
		g_written_since_scan = 0;
		cache_evict(root, limit);
	}
	pthread_mutex_unlock(&g_cache_lock);
}

static int reference_compute(const kgb_case_t *c, kgb_hostbufs_t *b, char *err, size_t errlen)
{
	if (c->op->ref(c, b) == 0)
		return 0;
	return kgb_err(err, errlen, "op %s case %u (%s): the reference implementation failed", c->op->name, c->index,
	               c->label);
}

/* kgb_case_inputs, its time counted (kgb_inputs_ns). */
static int gen_inputs(const kgb_case_t *c, uint64_t seed, kgb_hostbufs_t *b, char *err, size_t errlen)
{
	uint64_t t0 = kgb_now_ns();
	int rc = kgb_case_inputs(c, seed, b, err, errlen);
	__atomic_add_fetch(&g_inputs_ns, kgb_now_ns() - t0, __ATOMIC_RELAXED);
	return rc;
}

static void hostbufs_copy(const kgb_case_t *c, const kgb_hostbufs_t *from, kgb_hostbufs_t *to)
{
	memset(to, 0, sizeof *to);
	to->n = from->n;
	for (int i = 0; i < c->ntensors; i++) {
		size_t n = (c->t[i].storage ? c->t[i].storage : 1) * (size_t)kgb_dtype_lanes(c->t[i].dtype);
		to->v[i] = kgb_xmalloc(n * sizeof(double));
		memcpy(to->v[i], from->v[i], n * sizeof(double));
	}
}

/* See the header. */
int kgb_case_reference_once(const kgb_case_t *c, uint64_t seed, kgb_hostbufs_t *b, char *err, size_t errlen)
{
	if (gen_inputs(c, seed, b, err, errlen) != 0)
		return -1;
	return reference_compute(c, b, err, errlen);
}

/* See the header. */
int kgb_case_reference_inputs(const kgb_case_t *c, uint64_t seed, kgb_hostbufs_t *ref, kgb_hostbufs_t *in, char *err,
                              size_t errlen)
{
	char why[256];
	char *root = NULL, *path = NULL;
	char kh[65];
	uint64_t limit = cache_limit_bytes();
	kgb_hostbufs_t gen;
	int rc = -1;
	memset(ref, 0, sizeof *ref);
	if (in)
		memset(in, 0, sizeof *in);
	if (limit > 0) {
		root = kgb_ref_cache_root();
		case_key(c, seed, kh);
		path = entry_path(root, kh);
		if (access(path, F_OK) == 0) {
			if (cache_load(path, kh, c, ref, in, why, sizeof why) == 0) {
				utime(path, NULL);  /* eviction removes the least recently used */
				__atomic_add_fetch(&g_hits, 1, __ATOMIC_RELAXED);
				rc = 0;
				goto out;
			}
			log_warn("op=%s case=%u reference cache %s is not valid (%s): recomputing", c->op->name, c->index,
			         path, why);
		}
		__atomic_add_fetch(&g_misses, 1, __ATOMIC_RELAXED);
	}
	if (gen_inputs(c, seed, ref, err, errlen) != 0) {
		kgb_hostbufs_release(ref);
		goto out;
	}
	/* the inputs as generated, before the reference overwrites the INOUT tensors */
	hostbufs_copy(c, ref, &gen);
	for (int i = 0; i < c->ntensors; i++)
		if (c->t[i].role == KGB_ROLE_OUT)
			memset(gen.v[i], 0, (c->t[i].storage ? c->t[i].storage : 1) * (size_t)kgb_dtype_lanes(c->t[i].dtype) *
			                    sizeof(double));
	if (reference_compute(c, ref, err, errlen) != 0) {
		kgb_hostbufs_release(&gen);
		kgb_hostbufs_release(ref);
		goto out;
	}
	if (path)
		cache_store(root, path, kh, c, &gen, ref, limit);
	if (in)
		*in = gen;
	else
		kgb_hostbufs_release(&gen);
	rc = 0;
out:
	free(root);
	free(path);
	return rc;
}

/* See the header. */
int kgb_case_reference(const kgb_case_t *c, uint64_t seed, kgb_hostbufs_t *b, char *err, size_t errlen)
{
	return kgb_case_reference_inputs(c, seed, b, NULL, err, errlen);
}
