/* Launch plans: JSON -> kgb_plan_t, and the check of a plan against an operator.
 * The format is documented in docs/candidate-format.md. */
#include "plan.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "jsonmsg.h"
#include "util.h"

static const char *const lang_names[KGB_LANG__COUNT] = {
	[KGB_LANG_OPENCL] = "opencl", [KGB_LANG_CUDA] = "cuda", [KGB_LANG_TRITON] = "triton",
	[KGB_LANG_PTX] = "ptx",       [KGB_LANG_CUBIN] = "cubin", [KGB_LANG_HIP] = "hip",
	[KGB_LANG_SPIRV] = "spirv",  [KGB_LANG_HSACO] = "hsaco",
};

/* "opencl", "cuda", ...; "?" when out of range. */
const char *kgb_lang_name(kgb_lang_t l)
{
	return (unsigned)l < KGB_LANG__COUNT ? lang_names[l] : "?";
}

/* Parse a language name. Returns 0 or -1. */
int kgb_lang_parse(const char *s, kgb_lang_t *out)
{
	for (int i = 0; i < KGB_LANG__COUNT; i++)
		if (s && strcmp(s, lang_names[i]) == 0) {
			*out = (kgb_lang_t)i;
			return 0;
		}
	return -1;
}

/* ---- parse context: origin + JSON path for messages ---- */

typedef kgb_jctx_t pctx_t;

/* The case a check evaluates expressions on, for messages (per thread). */
static __thread uint32_t check_case;

#define perr kgb_jctx_err
#define check_keys kgb_jctx_check_keys
#define show kgb_json_show
#define pathf kgb_json_path

static bool is_ident(const char *s)
{
	if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

/* A required (or optional, when !req) string member. *out is a heap copy or NULL. */
/* Shortest decimal form of a double that reads back exactly. */
static void fmt_real(double f, char *buf, size_t n)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, f);
		if (strtod(buf, NULL) == f)
			return;
	}
}

/* An expression given as a string or an integer (or, where allow_real, a real):
 * a heap string. */
static int get_expr(pctx_t *c, const char *path, json_t *v, bool allow_real, char **out)
{
	char buf[64];
	*out = NULL;
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		const char *q = s;
		while (*q == ' ' || *q == '\t')
			q++;
		if (!*q)
			return perr(c, path, "empty expression \"%s\"", s);
		*out = kgb_xstrdup(s);
		return 0;
	}
	if (json_is_integer(v)) {
		snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
		*out = kgb_xstrdup(buf);
		return 0;
	}
	if (allow_real && json_is_real(v)) {
		fmt_real(json_real_value(v), buf, sizeof buf);
		*out = kgb_xstrdup(buf);
		return 0;
	}
	return perr(c, path, "expected an expression (a string or an integer), got %s", show(v));
}

static int parse_defines(pctx_t *c, const char *path, json_t *v, kgb_plan_define_t **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	if (!json_is_object(v))
		return perr(c, path, "expected an object of NAME: value, got %s", show(v));
	size_t n = json_object_size(v);
	kgb_plan_define_t *d = kgb_xcalloc(n ? n : 1, sizeof *d);
	*out = d;
	const char *key;
	json_t *val;
	json_object_foreach(v, key, val) {
		char p[320];
		pathf(p, sizeof p, "%s.%s", path, key);
		if (!is_ident(key))
			return perr(c, p, "define name '%s' is not an identifier", key);
		char buf[64];
		d[*nout].name = kgb_xstrdup(key);
		if (json_is_string(val))
			d[*nout].value = kgb_xstrdup(json_string_value(val));
		else if (json_is_integer(val)) {
			snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(val));
			d[*nout].value = kgb_xstrdup(buf);
		} else if (json_is_real(val)) {
			fmt_real(json_real_value(val), buf, sizeof buf);
			d[*nout].value = kgb_xstrdup(buf);
		} else {
			(*nout)++;
			return perr(c, p, "expected a string or a number, got %s", show(val));
		}
		(*nout)++;
	}
	return 0;
}

/* grid / block: an array of 1-3 expressions (a single expression is accepted too). */
static int parse_dims(pctx_t *c, const char *path, json_t *v, char *dims[3], int *n)
{
	*n = 0;
	if (!json_is_array(v)) {
		if (json_is_string(v) || json_is_integer(v)) {
			if (get_expr(c, path, v, false, &dims[0]) != 0)
				return -1;
			*n = 1;
			return 0;
		}
		return perr(c, path, "expected an array of 1 to 3 expressions, got %s", show(v));
	}
	size_t len = json_array_size(v);
	if (len < 1 || len > 3)
		return perr(c, path, "expected 1 to 3 expressions, got %zu", len);
	for (size_t i = 0; i < len; i++) {
		char p[256];
		pathf(p, sizeof p, "%s[%zu]", path, i);
		if (get_expr(c, p, json_array_get(v, i), false, &dims[i]) != 0)
			return -1;
		(*n)++;
	}
	return 0;
}

static int parse_scalar_type(pctx_t *c, const char *path, json_t *v, kgb_dtype_t *out)
{
	static const struct {
		const char *name;
		kgb_dtype_t t;
	} types[] = {
		/* u32 / u64 travel with the bytes of i32 / i64 (dtype.h has no unsigned
		 * 32/64-bit types); kgb_plan_check bounds their values */
		{"i32", KGB_DT_I32}, {"i64", KGB_DT_I64}, {"u32", KGB_DT_I32}, {"u64", KGB_DT_I64},
		{"f32", KGB_DT_F32}, {"f64", KGB_DT_F64}, {"f16", KGB_DT_F16}, {"bf16", KGB_DT_BF16},
	};
	if (!v) {
		*out = KGB_DT_I32;
		return 0;
	}
	if (!json_is_string(v))
		return perr(c, path, "expected a scalar type name, got %s", show(v));
	const char *s = json_string_value(v);
	for (size_t i = 0; i < KGB_ARRAY_LEN(types); i++)
		if (strcmp(s, types[i].name) == 0) {
			*out = types[i].t;
			return 0;
		}
	return perr(c, path, "unknown scalar type '%s' (i32 i64 u32 u64 f32 f64 f16 bf16)", s);
}

static int parse_arg(pctx_t *c, const char *path, json_t *v, kgb_plan_arg_t *a)
{
	static const char *const kinds[] = {"tensor", "scratch", "scalar", "local"};
	static const char *const keys[] = {"tensor", "scratch", "scalar", "local", "type", NULL};
	char p[256];
	if (!json_is_object(v))
		return perr(c, path, "expected an object such as {\"tensor\": \"out\"}, got %s", show(v));
	if (check_keys(c, path, v, keys) != 0)
		return -1;
	int found = -1;
	for (int k = 0; k < 4; k++)
		if (json_object_get(v, kinds[k])) {
			if (found >= 0)
				return perr(c, path, "has both '%s' and '%s' (an argument is one of tensor, scratch, scalar, local)",
				            kinds[found], kinds[k]);
			found = k;
		}
	if (found < 0)
		return perr(c, path, "needs one of 'tensor', 'scratch', 'scalar', 'local', got %s", show(v));
	pathf(p, sizeof p, "%s.%s", path, kinds[found]);
	json_t *x = json_object_get(v, kinds[found]);
	json_t *type = json_object_get(v, "type");
	if (type && found != 2) {
		pathf(p, sizeof p, "%s.type", path);
		return perr(c, p, "only scalar arguments have a type, got %s", show(type));
	}
	switch (found) {
	case 0:
	case 1:
		a->kind = found == 0 ? KGB_ARG_TENSOR : KGB_ARG_SCRATCH;
		if (!json_is_string(x))
			return perr(c, p, "expected a name, got %s", show(x));
		if (!is_ident(json_string_value(x)))
			return perr(c, p, "'%s' is not a valid name", json_string_value(x));
		a->name = kgb_xstrdup(json_string_value(x));
		return 0;
	case 2:
		a->kind = KGB_ARG_SCALAR;
		if (get_expr(c, p, x, true, &a->expr) != 0)
			return -1;
		pathf(p, sizeof p, "%s.type", path);
		return parse_scalar_type(c, p, type, &a->dtype);
	default:
		a->kind = KGB_ARG_LOCAL;
		return get_expr(c, p, x, false, &a->expr);
	}
}

static int get_int_field(pctx_t *c, const char *path, json_t *obj, const char *key, int lo, int hi, int dflt,
                         int *out)
{
	char p[256];
	pathf(p, sizeof p, "%s.%s", path, key);
	json_t *v = json_object_get(obj, key);
	if (!v) {
		*out = dflt;
		return 0;
	}
	if (!json_is_integer(v))
		return perr(c, p, "expected an integer, got %s", show(v));
	json_int_t i = json_integer_value(v);
	if (i < lo || i > hi)
		return perr(c, p, "%lld is out of range %d..%d", (long long)i, lo, hi);
	*out = (int)i;
	return 0;
}

static int parse_config(pctx_t *c, const char *path, json_t *v, kgb_plan_config_t *cfg)
{
	static const char *const keys[] = {"constants", "num_warps", "num_stages", "num_ctas", NULL};
	if (!json_is_object(v))
		return perr(c, path, "expected an object, got %s", show(v));
	if (check_keys(c, path, v, keys) != 0)
		return -1;
	json_t *k = json_object_get(v, "constants");
	if (k) {
		char p[256];
		pathf(p, sizeof p, "%s.constants", path);
		if (parse_defines(c, p, k, &cfg->constants, &cfg->nconstants) != 0)
			return -1;
	}
	if (get_int_field(c, path, v, "num_warps", 1, 32, 4, &cfg->num_warps) != 0 ||
	    get_int_field(c, path, v, "num_stages", 1, 16, 3, &cfg->num_stages) != 0 ||
	    get_int_field(c, path, v, "num_ctas", 1, 16, 1, &cfg->num_ctas) != 0)
		return -1;
	if (cfg->num_warps & (cfg->num_warps - 1)) {
		char p[256];
		pathf(p, sizeof p, "%s.num_warps", path);
		return perr(c, p, "%d is not a power of two", cfg->num_warps);
	}
	return 0;
}

static int parse_kernel(pctx_t *c, const char *path, json_t *v, kgb_plan_kernel_t *k)
{
	static const char *const keys[] = {"entry", "lang",  "source",    "defines", "options", "grid",
	                                   "block", "shared", "args", "signature", "configs", "when", NULL};
	char p[256];
	if (!json_is_object(v))
		return perr(c, path, "expected a kernel object, got %s", show(v));
	if (check_keys(c, path, v, keys) != 0)
		return -1;
	if (kgb_jctx_get_str(c, path, v, "entry", true, &k->entry) != 0)
		return -1;
	pathf(p, sizeof p, "%s.entry", path);
	if (!is_ident(k->entry))
		return perr(c, p, "'%s' is not a valid function name", k->entry);
	char *lang = NULL;
	if (kgb_jctx_get_str(c, path, v, "lang", true, &lang) != 0)
		return -1;
	int rc = kgb_lang_parse(lang, &k->lang);
	pathf(p, sizeof p, "%s.lang", path);
	if (rc != 0) {
		perr(c, p, "unknown language '%s' (opencl cuda triton ptx cubin hip spirv hsaco)", lang);
		free(lang);
		return -1;
	}
	free(lang);
	if (kgb_jctx_get_str(c, path, v, "source", true, &k->source) != 0)
		return -1;
	pathf(p, sizeof p, "%s.source", path);
	if (!*k->source || strstr(k->source, "..") || k->source[0] == '/')
		return perr(c, p, "'%s' is not a plain relative file name", k->source);
	if (kgb_jctx_get_str(c, path, v, "options", false, &k->options) != 0)
		return -1;
	json_t *x;
	if ((x = json_object_get(v, "defines"))) {
		pathf(p, sizeof p, "%s.defines", path);
		if (parse_defines(c, p, x, &k->defines, &k->ndefines) != 0)
			return -1;
	}
	bool triton = k->lang == KGB_LANG_TRITON;
	pathf(p, sizeof p, "%s.grid", path);
	x = json_object_get(v, "grid");
	if (!x)
		return perr(c, p, "missing (an array of 1 to 3 expressions is required)");
	if (parse_dims(c, p, x, k->grid, &k->ngrid) != 0)
		return -1;
	pathf(p, sizeof p, "%s.block", path);
	x = json_object_get(v, "block");
	if (triton && x)
		return perr(c, p, "not used by triton kernels (threads = 32 * num_warps), got %s", show(x));
	if (!triton && !x)
		return perr(c, p, "missing (an array of 1 to 3 expressions is required)");
	if (x && parse_dims(c, p, x, k->block, &k->nblock) != 0)
		return -1;
	if ((x = json_object_get(v, "shared"))) {
		pathf(p, sizeof p, "%s.shared", path);
		if (get_expr(c, p, x, false, &k->shared) != 0)
			return -1;
	}
	pathf(p, sizeof p, "%s.args", path);
	x = json_object_get(v, "args");
	if (!x)
		return perr(c, p, "missing (an array of arguments is required)");
	if (!json_is_array(x))
		return perr(c, p, "expected an array, got %s", show(x));
	k->nargs = 0;
	k->args = kgb_xcalloc(json_array_size(x) ? json_array_size(x) : 1, sizeof *k->args);
	for (size_t i = 0; i < json_array_size(x); i++) {
		pathf(p, sizeof p, "%s.args[%zu]", path, i);
		k->nargs++;
		if (parse_arg(c, p, json_array_get(x, i), &k->args[i]) != 0)
			return -1;
	}
	if (kgb_jctx_get_str(c, path, v, "signature", false, &k->signature) != 0)
		return -1;
	if ((x = json_object_get(v, "when"))) {
		pathf(p, sizeof p, "%s.when", path);
		if (get_expr(c, p, x, false, &k->when) != 0)
			return -1;
	}
	if (k->signature && !triton) {
		pathf(p, sizeof p, "%s.signature", path);
		return perr(c, p, "only triton kernels have a signature (lang is %s)", kgb_lang_name(k->lang));
	}
	if ((x = json_object_get(v, "configs"))) {
		pathf(p, sizeof p, "%s.configs", path);
		if (!triton)
			return perr(c, p, "only triton kernels have autotune configs (lang is %s)", kgb_lang_name(k->lang));
		if (!json_is_array(x) || json_array_size(x) == 0)
			return perr(c, p, "expected a non-empty array of configs, got %s", show(x));
		k->configs = kgb_xcalloc(json_array_size(x), sizeof *k->configs);
		for (size_t i = 0; i < json_array_size(x); i++) {
			pathf(p, sizeof p, "%s.configs[%zu]", path, i);
			k->nconfigs++;
			if (parse_config(c, p, json_array_get(x, i), &k->configs[i]) != 0)
				return -1;
		}
	}
	return 0;
}

static int parse_scratch(pctx_t *c, const char *path, json_t *v, kgb_plan_scratch_t *s)
{
	static const char *const keys[] = {"name", "bytes", "zero", NULL};
	char p[256];
	if (!json_is_object(v))
		return perr(c, path, "expected an object {\"name\": ..., \"bytes\": ...}, got %s", show(v));
	if (check_keys(c, path, v, keys) != 0)
		return -1;
	if (kgb_jctx_get_str(c, path, v, "name", true, &s->name) != 0)
		return -1;
	pathf(p, sizeof p, "%s.name", path);
	if (!is_ident(s->name))
		return perr(c, p, "'%s' is not a valid name", s->name);
	pathf(p, sizeof p, "%s.bytes", path);
	json_t *b = json_object_get(v, "bytes");
	if (!b)
		return perr(c, p, "missing (a size expression is required)");
	if (get_expr(c, p, b, false, &s->bytes) != 0)
		return -1;
	json_t *z = json_object_get(v, "zero");
	if (z) {
		pathf(p, sizeof p, "%s.zero", path);
		if (!json_is_boolean(z))
			return perr(c, p, "expected true or false, got %s", show(z));
		s->zero = json_is_true(z);
	}
	return 0;
}

static int plan_from_json(json_t *root, const char *origin, kgb_plan_t *p, char *err, size_t errlen);

/* Parse a plan; see plan.h. */
int kgb_plan_parse(const char *json, size_t len, const char *origin, kgb_plan_t **out, char *err, size_t errlen)
{
	pctx_t c = {.origin = origin ? origin : "plan", .err = err, .errlen = errlen};
	json_error_t je;
	*out = NULL;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return kgb_err(err, errlen, "%s: line %d column %d: %s", c.origin, je.line, je.column, je.text);
	kgb_plan_t *p = kgb_xcalloc(1, sizeof *p);
	int rc = plan_from_json(root, c.origin, p, err, errlen);
	json_decref(root);
	if (rc != 0) {
		kgb_plan_destroy(&p);
		return -1;
	}
	*out = p;
	return 0;
}

/* Fill p from a parsed JSON object. */
static int plan_from_json(json_t *root, const char *origin, kgb_plan_t *p, char *err, size_t errlen)
{
	static const char *const keys[] = {"kernels", "scratch", NULL};
	pctx_t c = {.origin = origin ? origin : "plan", .err = err, .errlen = errlen};
	if (!json_is_object(root))
		return kgb_err(err, errlen, "%s: expected a plan object {\"kernels\": [...]}, got %s", c.origin, show(root));
	if (check_keys(&c, "", root, keys) != 0)
		return -1;
	json_t *ks = json_object_get(root, "kernels");
	if (!ks)
		return perr(&c, "kernels", "missing (a non-empty array of kernels is required)");
	if (!json_is_array(ks) || json_array_size(ks) == 0)
		return perr(&c, "kernels", "expected a non-empty array of kernels, got %s", show(ks));
	if (json_array_size(ks) > 64)
		return perr(&c, "kernels", "%zu kernels, at most 64 are allowed", json_array_size(ks));
	p->kernels = kgb_xcalloc(json_array_size(ks), sizeof *p->kernels);
	for (size_t i = 0; i < json_array_size(ks); i++) {
		char path[64];
		pathf(path, sizeof path, "kernels[%zu]", i);
		p->nkernels++;
		if (parse_kernel(&c, path, json_array_get(ks, i), &p->kernels[i]) != 0)
			return -1;
	}
	json_t *ss = json_object_get(root, "scratch");
	if (ss) {
		if (!json_is_array(ss))
			return perr(&c, "scratch", "expected an array, got %s", show(ss));
		p->scratch = kgb_xcalloc(json_array_size(ss) ? json_array_size(ss) : 1, sizeof *p->scratch);
		for (size_t i = 0; i < json_array_size(ss); i++) {
			char path[64];
			pathf(path, sizeof path, "scratch[%zu]", i);
			p->nscratch++;
			if (parse_scratch(&c, path, json_array_get(ss, i), &p->scratch[i]) != 0)
				return -1;
			for (size_t j = 0; j < i; j++)
				if (strcmp(p->scratch[j].name, p->scratch[i].name) == 0) {
					pathf(path, sizeof path, "scratch[%zu].name", i);
					return perr(&c, path, "'%s' is declared twice (also scratch[%zu])", p->scratch[i].name, j);
				}
		}
	}
	return 0;
}

static void free_defines(kgb_plan_define_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(d[i].name);
		free(d[i].value);
	}
	free(d);
}

/* Free a plan and everything in it; sets *p to NULL. */
void kgb_plan_destroy(kgb_plan_t **pp)
{
	if (!pp || !*pp)
		return;
	kgb_plan_t *p = *pp;
	for (size_t i = 0; i < p->nkernels; i++) {
		kgb_plan_kernel_t *k = &p->kernels[i];
		free(k->entry);
		free(k->source);
		free(k->options);
		free(k->shared);
		free(k->signature);
		free(k->when);
		free(k->prebuilt);
		free(k->prebuilt_abi);
		free_defines(k->defines, k->ndefines);
		for (int d = 0; d < 3; d++) {
			free(k->grid[d]);
			free(k->block[d]);
		}
		for (size_t a = 0; a < k->nargs; a++) {
			free(k->args[a].name);
			free(k->args[a].expr);
		}
		free(k->args);
		for (size_t j = 0; j < k->nconfigs; j++) {
			free_defines(k->configs[j].constants, k->configs[j].nconstants);
			free(k->configs[j].prebuilt);
			free(k->configs[j].prebuilt_abi);
		}
		free(k->configs);
	}
	free(p->kernels);
	for (size_t i = 0; i < p->nscratch; i++) {
		free(p->scratch[i].name);
		free(p->scratch[i].bytes);
	}
	free(p->scratch);
	free(p);
	*pp = NULL;
}

/* ---- check against an operator ---- */

/* Evaluate an integer expression and bound it; messages name path and expression. */
static int check_int(pctx_t *c, const char *path, const char *expr, const kgb_symtab_t *st, int64_t lo,
                     int64_t hi, const char *what)
{
	int64_t v;
	char sub[256];
	if (kgb_expr_eval_int(expr, st, &v, sub, sizeof sub) != 0)
		return perr(c, path, "\"%.80s%s\": %s", expr, strlen(expr) > 80 ? "..." : "", sub);
	if (v < lo || v > hi)
		return perr(c, path, "\"%s\" = %lld on case %u, %s must be in %lld..%lld", expr, (long long)v,
		            check_case, what, (long long)lo, (long long)hi);
	return 0;
}

static int check_template(pctx_t *c, const char *path, const char *tmpl, const kgb_symtab_t *st)
{
	char sub[256];
	char *s = kgb_expr_subst(tmpl, st, sub, sizeof sub);
	if (!s)
		return perr(c, path, "\"%.80s%s\": %s", tmpl, strlen(tmpl) > 80 ? "..." : "", sub);
	free(s);
	return 0;
}

static void tensor_list(const kgb_case_t *cs, char *buf, size_t n)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < cs->ntensors && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", cs->t[i].name);
}

/* Bind configuration cfg's constants as symbols of st (numbers when they parse as
 * numbers, strings otherwise), as the executor does before a kernel's expressions are
 * evaluated. */
static int bind_constants(pctx_t *c, size_t ki, size_t cfg, const kgb_plan_config_t *C, kgb_symtab_t *st)
{
	char sub[256], path[128];
	for (size_t d = 0; d < C->nconstants; d++) {
		pathf(path, sizeof path, "kernels[%zu].configs[%zu].constants.%s", ki, cfg, C->constants[d].name);
		char *val = kgb_expr_subst(C->constants[d].value ? C->constants[d].value : "", st, sub, sizeof sub);
		if (!val)
			return perr(c, path, "\"%s\": %s", C->constants[d].value, sub);
		char *end = NULL;
		long long iv = strtoll(val, &end, 0);
		if (*val && end && *end == '\0') {
			kgb_symtab_set_int(st, C->constants[d].name, iv);
		} else {
			double dv = strtod(val, &end);
			if (*val && end && *end == '\0')
				kgb_symtab_set_float(st, C->constants[d].name, dv);
			else
				kgb_symtab_set_str(st, C->constants[d].name, val);
		}
		free(val);
	}
	return 0;
}

/* Check kernel i of p against the built case cs. Returns 0 or -1 with the error. */
static int check_kernel(pctx_t *c, const kgb_plan_t *p, size_t i, const kgb_op_t *op, kgb_case_t *cs)
{
	const kgb_symtab_t *st = cs->sym;
	char sub[256], path[128];
	const kgb_plan_kernel_t *k = &p->kernels[i];
	/* Triton configurations: their constants are case symbols for this kernel's
	 * grid and arguments (as the executor binds them), so check every config. */
	size_t ncfg = k->nconfigs ? k->nconfigs : 1;
	for (size_t cfg = 0; cfg < ncfg; cfg++) {
		if (k->nconfigs && bind_constants(c, i, cfg, &k->configs[cfg], cs->sym) != 0)
			return -1;
		for (int d = 0; d < k->ngrid; d++) {
			pathf(path, sizeof path, "kernels[%zu].grid[%d]", i, d);
			if (check_int(c, path, k->grid[d], st, 1, ((int64_t)1 << 31) - 1, "a grid size") != 0)
				return -1;
		}
		for (int d = 0; d < k->nblock; d++) {
			pathf(path, sizeof path, "kernels[%zu].block[%d]", i, d);
			if (check_int(c, path, k->block[d], st, 1, 4096, "a block size") != 0)
				return -1;
		}
		if (k->shared) {
			pathf(path, sizeof path, "kernels[%zu].shared", i);
			if (check_int(c, path, k->shared, st, 0, (int64_t)1 << 30, "shared memory bytes") != 0)
				return -1;
		}
	}
	for (size_t d = 0; d < k->ndefines; d++) {
		pathf(path, sizeof path, "kernels[%zu].defines.%s", i, k->defines[d].name);
		if (check_template(c, path, k->defines[d].value, st) != 0)
			return -1;
	}
	if (k->options) {
		pathf(path, sizeof path, "kernels[%zu].options", i);
		if (check_template(c, path, k->options, st) != 0)
			return -1;
	}
	for (size_t j = 0; j < k->nconfigs; j++)
		for (size_t d = 0; d < k->configs[j].nconstants; d++) {
			pathf(path, sizeof path, "kernels[%zu].configs[%zu].constants.%s", i, j,
			         k->configs[j].constants[d].name);
			if (check_template(c, path, k->configs[j].constants[d].value, st) != 0)
				return -1;
		}
	for (size_t a = 0; a < k->nargs; a++) {
		const kgb_plan_arg_t *arg = &k->args[a];
		switch (arg->kind) {
		case KGB_ARG_TENSOR:
			pathf(path, sizeof path, "kernels[%zu].args[%zu].tensor", i, a);
			if (kgb_case_tensor_index(cs, arg->name) < 0) {
				char list[256];
				tensor_list(cs, list, sizeof list);
				perr(c, path, "operator '%s' has no tensor '%s' (it has: %s)", op->name, arg->name, list);
				return -1;
			}
			break;
		case KGB_ARG_SCRATCH: {
			pathf(path, sizeof path, "kernels[%zu].args[%zu].scratch", i, a);
			bool found = false;
			for (size_t s = 0; s < p->nscratch; s++)
				if (strcmp(p->scratch[s].name, arg->name) == 0)
					found = true;
			if (!found) {
				perr(c, path, "'%s' is not declared in the plan's \"scratch\" list", arg->name);
				return -1;
			}
			break;
		}
		case KGB_ARG_SCALAR: {
			pathf(path, sizeof path, "kernels[%zu].args[%zu].scalar", i, a);
			kgb_value_t v;
			if (kgb_expr_eval(arg->expr, st, &v, sub, sizeof sub) != 0) {
				perr(c, path, "\"%.80s%s\": %s", arg->expr, strlen(arg->expr) > 80 ? "..." : "", sub);
				return -1;
			}
			if (!kgb_dtype_is_float(arg->dtype) && v.is_float && v.f != floor(v.f)) {
				perr(c, path, "\"%s\" = %g on case %u is not an integer but the type is %s", arg->expr, v.f, check_case,
				     kgb_dtype_name(arg->dtype));
				return -1;
			}
			double x = kgb_value_as_double(v);
			if (arg->dtype == KGB_DT_I32 && (x < -2147483648.0 || x > 2147483647.0)) {
				perr(c, path, "\"%s\" = %.17g on case %u does not fit a 32-bit argument", arg->expr, x,
				     check_case);
				return -1;
			}
			break;
		}
		case KGB_ARG_LOCAL:
			pathf(path, sizeof path, "kernels[%zu].args[%zu].local", i, a);
			if (check_int(c, path, arg->expr, st, 1, (int64_t)1 << 30, "local memory bytes") != 0)
				return -1;
			break;
		}
	}
	return 0;
}

/* Whether kernel k runs on case c; see plan.h. */
int kgb_plan_kernel_runs(const kgb_plan_kernel_t *k, const kgb_case_t *c, char *err, size_t errlen)
{
	int64_t v;
	if (!k->when)
		return 1;
	if (kgb_expr_eval_int(k->when, c->sym, &v, err, errlen) != 0)
		return -1;
	return v != 0;
}

/* Plans with "when": evaluate every kernel's condition on every case, then check each
 * kernel on the first case it runs on. */
static int check_conditional(pctx_t *c, const kgb_plan_t *p, const kgb_op_t *op)
{
	uint32_t n = kgb_op_case_count(op);
	int64_t *first = kgb_xmalloc(p->nkernels * sizeof *first);
	char sub[256], path[128];
	int rc = -1;
	for (size_t i = 0; i < p->nkernels; i++)
		first[i] = -1;
	for (uint32_t ci = 0; ci < n; ci++) {
		kgb_case_t cs;
		if (kgb_case_build(op, ci, &cs, sub, sizeof sub) != 0) {
			kgb_err(c->err, c->errlen, "%s: cannot build case %u of operator '%s': %s", c->origin, ci,
			        op->name, sub);
			goto out;
		}
		for (size_t i = 0; i < p->nkernels; i++) {
			int r = first[i] >= 0 && !p->kernels[i].when ? 1 : kgb_plan_kernel_runs(&p->kernels[i], &cs, sub, sizeof sub);
			if (r < 0) {
				pathf(path, sizeof path, "kernels[%zu].when", i);
				check_case = ci;
				perr(c, path, "\"%s\" on case %u (%s): %s", p->kernels[i].when, ci, cs.label, sub);
				kgb_case_release(&cs);
				goto out;
			}
			if (r && first[i] < 0) {
				check_case = ci;
				if (check_kernel(c, p, i, op, &cs) != 0) {
					size_t l = strlen(c->err);
					if (l < c->errlen)
						snprintf(c->err + l, c->errlen - l, " (case %u: %s)", ci, cs.label);
					kgb_case_release(&cs);
					goto out;
				}
				first[i] = ci;
			}
		}
		kgb_case_release(&cs);
	}
	for (size_t i = 0; i < p->nkernels; i++)
		if (first[i] < 0) {
			pathf(path, sizeof path, "kernels[%zu].when", i);
			perr(c, path, "\"%s\" is 0 on every case of '%s': the kernel never runs", p->kernels[i].when,
			     op->name);
			goto out;
		}
	rc = 0;
out:
	free(first);
	return rc;
}

/* Check a plan against op; see plan.h. */
int kgb_plan_check(const kgb_plan_t *p, const kgb_op_t *op, const char *origin, char *err, size_t errlen)
{
	pctx_t c = {.origin = origin ? origin : "plan", .err = err, .errlen = errlen};
	kgb_case_t cs;
	char sub[256], path[128];
	bool conditional = false;
	int rc = -1;
	check_case = 0;
	if (kgb_case_build(op, 0, &cs, sub, sizeof sub) != 0)
		return kgb_err(err, errlen, "%s: cannot build case 0 of operator '%s': %s", c.origin, op->name, sub);
	const kgb_symtab_t *st = cs.sym;
	for (size_t s = 0; s < p->nscratch; s++) {
		pathf(path, sizeof path, "scratch[%zu].bytes", s);
		if (check_int(&c, path, p->scratch[s].bytes, st, 0, (int64_t)1 << 40, "a scratch size") != 0)
			goto out;
	}
	for (size_t i = 0; i < p->nkernels; i++)
		conditional |= p->kernels[i].when != NULL;
	if (conditional) {
		rc = check_conditional(&c, p, op);
		goto out;
	}
	for (size_t i = 0; i < p->nkernels; i++)
		if (check_kernel(&c, p, i, op, &cs) != 0)
			goto out;
	rc = 0;
out:
	kgb_case_release(&cs);
	return rc;
}

/* ---- candidate kinds ---- */

const char *kgb_cand_kind_name(kgb_cand_kind_t k)
{
	switch (k) {
	case KGB_CAND_PLAN: return "plan";
	case KGB_CAND_PYTHON: return "python";
	case KGB_CAND_NATIVE: return "native";
	}
	return "?";
}

int kgb_plan_kind(const char *json, size_t len, const char *origin, char **module, char *err, size_t errlen)
{
	if (module)
		*module = NULL;
	json_error_t je;
	json_t *root = json_loadb(json, len, 0, &je);
	if (!root)
		return kgb_err(err, errlen, "%s: line %d column %d: %s", origin, je.line, je.column, je.text);
	int kind = -1;
	json_t *k = json_is_object(root) ? json_object_get(root, "kind") : NULL;
	if (!json_is_object(root)) {
		kgb_err(err, errlen, "%s: expected a plan object, got a JSON %s", origin,
		        json_is_array(root) ? "array" : json_is_string(root) ? "string" : "value");
		goto out;
	}
	if (!k) {
		kind = KGB_CAND_PLAN;
		goto out;
	}
	const char *ks = json_string_value(k);
	if (!ks) {
		kgb_err(err, errlen, "%s: kind: expected \"plan\", \"python\" or \"native\", got a non-string", origin);
		goto out;
	}
	const char *key;
	json_t *val;
	if (strcmp(ks, "plan") == 0) {
		kind = KGB_CAND_PLAN;
	} else if (strcmp(ks, "native") == 0) {
		json_object_foreach(root, key, val) {
			if (strcmp(key, "kind") != 0) {
				kgb_err(err, errlen, "%s: %s: unknown key for a native candidate (only \"kind\")", origin, key);
				goto out;
			}
		}
		kind = KGB_CAND_NATIVE;
	} else if (strcmp(ks, "python") == 0) {
		json_object_foreach(root, key, val) {
			if (strcmp(key, "kind") != 0 && strcmp(key, "module") != 0) {
				kgb_err(err, errlen, "%s: %s: unknown key for a python candidate (kind, module)", origin, key);
				goto out;
			}
		}
		json_t *m = json_object_get(root, "module");
		if (!json_is_string(m) || !*json_string_value(m)) {
			kgb_err(err, errlen, "%s: module: a python candidate names its module (one of its sources)", origin);
			goto out;
		}
		if (module)
			*module = kgb_xstrdup(json_string_value(m));
		kind = KGB_CAND_PYTHON;
	} else {
		kgb_err(err, errlen, "%s: kind: unknown candidate kind '%s' (plan, python, native)", origin, ks);
	}
out:
	json_decref(root);
	return kind;
}

char *kgb_triton_signature_map(const char *sig, kgb_triton_ptr_fn ptr, void *arg, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	KGB_ASSERT(f != NULL);
	bool first = true, ok = true;
	for (const char *p = sig; *p && ok;) {
		while (*p == ' ')
			p++;
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		while (l && p[l - 1] == ' ')
			l--;
		if (!first)
			fputc(',', f);
		first = false;
		if (l > 2 && p[0] == '*' && p[1] == '@') {
			const char *hint = memchr(p, ':', l);
			ok = ptr(f, p, l, p + 2, (hint ? (size_t)(hint - p) : l) - 2, arg, err, errlen) == 0;
		} else {
			fwrite(p, 1, l, f);
		}
		p = e ? e + 1 : p + strlen(p);
	}
	fclose(f);
	if (!ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

json_t *kgb_triton_constant_json(const char *v)
{
	char *end;
	if (!v)
		return json_null();
	long long i = strtoll(v, &end, 0);
	if (*v && !*end)
		return json_integer(i);
	double d = strtod(v, &end);
	if (*v && !*end)
		return json_real(d);
	return json_string(v);
}
