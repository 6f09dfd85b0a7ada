/* Campaign manifests: parse, resolve (read files, fetch URLs), serialise.
 * The format is documented in docs/candidate-format.md, section "Manifests". */
#include "manifest.h"
#include "srcscan.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sodium/utils.h>

#include "catalog.h"
#include "plan.h"
#include "jsonmsg.h"
#include "util.h"
#include "wire.h"


typedef kgb_jctx_t mctx_t;

#define merr kgb_jctx_err
#define check_keys kgb_jctx_check_keys
#define show kgb_json_show
#define pathf kgb_json_path

/* ---- base64 (RFC 4648, standard alphabet, padded; libsodium's codec) ---- */

static char *b64_encode(const uint8_t *p, size_t n)
{
	size_t outlen = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
	char *o = kgb_xmalloc(outlen);
	sodium_bin2base64(o, outlen, p, n, sodium_base64_VARIANT_ORIGINAL);
	return o;
}

/* Decode base64 text (whitespace ignored). Returns a heap buffer or NULL with *bad
 * the offset of the first offending character (slen when the text ends inside a
 * group or its padding). */
static uint8_t *b64_decode(const char *s, size_t slen, size_t *outlen, size_t *bad)
{
	size_t cap = slen / 4 * 3 + 4, n = 0;
	uint8_t *o = kgb_xmalloc(cap);
	const char *end = NULL;
	/* with b64_end given, libsodium stops at the first character it cannot take and
	 * leaves the judging of what follows to the caller */
	if (sodium_base642bin(o, cap, s, slen, " \n\r\t", &n, &end, sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    end != s + slen) {
		*bad = end ? (size_t)(end - s) : slen;
		free(o);
		return NULL;
	}
	*outlen = n;
	return o;
}

/* ---- parsing ---- */

/* A name as an error message may show it: control characters (C0, DEL, C1) as \xNN,
 * at most 64 bytes of it. */
static const char *shown_name(const char *s, char *buf, size_t n)
{
	size_t o = 0, i = 0;
	for (; s[i] && i < 64 && o + 5 < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		bool c1 = ch == 0xC2 && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9F;
		if (ch < 0x20 || ch == 0x7F || c1) {
			o += (size_t)snprintf(buf + o, n - o, "\\x%02x", c1 ? (unsigned char)s[++i] : ch);
		} else {
			buf[o++] = (char)ch;
		}
	}
	snprintf(buf + o, n - o, "%s", s[i] ? "..." : "");
	return buf;
}

#define STR_(x) #x
#define STR(x) STR_(x)
#define NAME_MAX_TEXT STR(KGB_NAME_MAX)

/* A campaign name: at most KGB_NAME_MAX bytes, no control character (a terminal
 * escape in a listing). NULL if fine, else what is wrong. */
static const char *campaign_name_problem(const char *s)
{
	if (strlen(s) > KGB_NAME_MAX)
		return "longer than " NAME_MAX_TEXT " bytes";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7F || (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F))
			return "a control character (a terminal escape, a newline) is not allowed in a name";
	return NULL;
}

static bool valid_name(const char *s)
{
	if (strlen(s) > KGB_NAME_MAX)
		return false;
	if (!*s)
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '-' || *s == '.' || *s == '+'))
			return false;
	return true;
}

static int get_uint(mctx_t *c, json_t *root, const char *key, long long lo, long long hi, long long dflt,
                    long long *out)
{
	json_t *v = json_object_get(root, key);
	if (!v) {
		*out = dflt;
		return 0;
	}
	if (!json_is_integer(v))
		return merr(c, key, "expected an integer, got %s", show(v));
	long long x = json_integer_value(v);
	if (x < lo || x > hi)
		return merr(c, key, "%lld is out of range %lld..%lld", x, lo, hi);
	*out = x;
	return 0;
}

static void add_op(kgb_manifest_t *m, const char *name)
{
	m->ops = kgb_xrealloc(m->ops, (m->nops + 1) * sizeof *m->ops);
	m->ops[m->nops++] = kgb_xstrdup(name);
}

static bool has_op(const kgb_manifest_t *m, const char *name)
{
	for (size_t i = 0; i < m->nops; i++)
		if (strcmp(m->ops[i], name) == 0)
			return true;
	return false;
}

static int parse_dataset(mctx_t *c, kgb_manifest_t *m, const char *path, const char *name)
{
	unsigned mask;
	if (kgb_dataset_parse(name, &mask) != 0)
		return merr(c, path, "unknown dataset '%s' (aten mc vllm cublas nocublas ms demo all)", name);
	m->dataset = kgb_xstrdup(name);
	for (size_t i = 0; i < kgb_catalog_count(); i++) {
		const kgb_op_t *op = kgb_catalog_at(i);
		if ((op->datasets & mask) && !has_op(m, op->name))
			add_op(m, op->name);
	}
	if (m->nops == 0)
		return merr(c, path, "dataset '%s' has no operators in this catalog", name);
	return 0;
}

static int parse_operators(mctx_t *c, kgb_manifest_t *m, json_t *v)
{
	if (!v)
		return merr(c, "operators", "missing (a list of operator names or {\"dataset\": NAME})");
	if (json_is_string(v))
		return parse_dataset(c, m, "operators", json_string_value(v));
	if (json_is_object(v)) {
		static const char *const keys[] = {"dataset", NULL};
		if (check_keys(c, "operators", v, keys) != 0)
			return -1;
		json_t *d = json_object_get(v, "dataset");
		if (!json_is_string(d))
			return merr(c, "operators.dataset", "expected a dataset name, got %s", show(d));
		return parse_dataset(c, m, "operators.dataset", json_string_value(d));
	}
	if (!json_is_array(v) || json_array_size(v) == 0)
		return merr(c, "operators", "expected a non-empty list of operator names or {\"dataset\": NAME}, got %s",
		            show(v));
	for (size_t i = 0; i < json_array_size(v); i++) {
		json_t *o = json_array_get(v, i);
		char p[64];
		pathf(p, sizeof p, "operators[%zu]", i);
		if (!json_is_string(o))
			return merr(c, p, "expected an operator name, got %s", show(o));
		const char *name = json_string_value(o);
		if (!kgb_catalog_find(name))
			return merr(c, p, "unknown operator '%s' (kgb ops lists them)", name);
		if (has_op(m, name))
			return merr(c, p, "operator '%s' is listed twice", name);
		add_op(m, name);
	}
	return 0;
}

static int parse_platforms(mctx_t *c, kgb_manifest_t *m, json_t *v)
{
	if (!v || (json_is_string(v) && strcmp(json_string_value(v), "all") == 0))
		return 0;
	if (!json_is_array(v) || json_array_size(v) == 0)
		return merr(c, "platforms", "expected \"all\" or a non-empty list of platform names, got %s", show(v));
	m->platforms = kgb_xcalloc(json_array_size(v), sizeof *m->platforms);
	for (size_t i = 0; i < json_array_size(v); i++) {
		json_t *o = json_array_get(v, i);
		char p[64];
		pathf(p, sizeof p, "platforms[%zu]", i);
		if (!json_is_string(o))
			return merr(c, p, "expected a platform name such as \"opencl:pthread-cpu\", got %s", show(o));
		const char *name = json_string_value(o);
		bool ok = *name != '\0';
		for (const char *q = name; *q; q++)
			if (isspace((unsigned char)*q) || !isprint((unsigned char)*q))
				ok = false;
		if (!ok)
			return merr(c, p, "'%s' is not a platform name (<backend>:<slug>, no spaces)", name);
		for (size_t j = 0; j < m->nplatforms; j++)
			if (strcmp(m->platforms[j], name) == 0)
				return merr(c, p, "platform '%s' is listed twice", name);
		m->platforms[m->nplatforms++] = kgb_xstrdup(name);
	}
	return 0;
}

static kgb_source_t *add_source(kgb_candidate_t *cd, const char *name)
{
	cd->sources = kgb_xrealloc(cd->sources, (cd->nsources + 1) * sizeof *cd->sources);
	kgb_source_t *s = &cd->sources[cd->nsources++];
	memset(s, 0, sizeof *s);
	s->name = kgb_xstrdup(name);
	return s;
}

static kgb_source_t *find_source(kgb_candidate_t *cd, const char *name)
{
	for (size_t i = 0; i < cd->nsources; i++)
		if (strcmp(cd->sources[i].name, name) == 0)
			return &cd->sources[i];
	return NULL;
}

static bool plain_file_name(const char *s)
{
	return *s && s[0] != '/' && !strstr(s, "..") && !strchr(s, '\\');
}

static int parse_sources(mctx_t *c, kgb_candidate_t *cd, const char *path, json_t *v, bool require_resolved)
{
	char p[320];
	pathf(p, sizeof p, "%s.sources", path);
	if (!json_is_object(v))
		return merr(c, p, "expected an object of NAME: source, got %s", show(v));
	const char *name;
	json_t *s;
	json_object_foreach(v, name, s) {
		pathf(p, sizeof p, "%s.sources.%s", path, name);
		if (!plain_file_name(name))
			return merr(c, p, "'%s' is not a plain relative file name", name);
		kgb_source_t *src = add_source(cd, name);
		if (json_is_string(s)) {
			if (require_resolved)
				return merr(c, p, "expected an inline source ({\"inline\": ...} or {\"base64\": ...}), got a file name %s",
				            show(s));
			if (!*json_string_value(s))
				return merr(c, p, "empty file name");
			src->file = kgb_xstrdup(json_string_value(s));
			continue;
		}
		if (!json_is_object(s) || json_object_size(s) != 1)
			return merr(c, p,
			            "expected a file name, {\"url\": ...}, {\"inline\": ...} or {\"base64\": ...}, got %s",
			            show(s));
		const char *kind = json_object_iter_key(json_object_iter(s));
		json_t *val = json_object_iter_value(json_object_iter(s));
		char q[340];
		pathf(q, sizeof q, "%s.%s", p, kind);
		if (!json_is_string(val))
			return merr(c, q, "expected a string, got %s", show(val));
		const char *text = json_string_value(val);
		size_t tlen = json_string_length(val);
		if (strcmp(kind, "inline") == 0) {
			src->content = kgb_xmalloc(tlen + 1);
			memcpy(src->content, text, tlen);
			src->content[tlen] = '\0';
			src->len = tlen;
		} else if (strcmp(kind, "base64") == 0) {
			size_t bad = 0, n = 0;
			uint8_t *bin = b64_decode(text, tlen, &n, &bad);
			if (!bin)
				return merr(c, q, "invalid base64 at character %zu", bad + 1);
			src->content = kgb_xrealloc(bin, n + 1);
			src->content[n] = '\0';
			src->len = n;
		} else if (strcmp(kind, "url") == 0) {
			if (require_resolved)
				return merr(c, q, "expected an inline source, got a URL '%s'", text);
			if (strncmp(text, "http://", 7) != 0 && strncmp(text, "https://", 8) != 0)
				return merr(c, q, "'%s' is not an http:// or https:// URL", text);
			src->url = kgb_xstrdup(text);
		} else {
			return merr(c, q, "unknown source kind '%s' (url, inline, base64)", kind);
		}
	}
	return 0;
}

/* Parse plan_json as a plan and check it against the candidate's operator. */
static int check_plan_text(mctx_t *c, kgb_candidate_t *cd, kgb_plan_t **planp)
{
	char sub[1024], origin[512];
	const kgb_op_t *op = kgb_catalog_find(cd->op);
	KGB_ASSERT(op);
	if (cd->plan_file)
		pathf(origin, sizeof origin, "%s.plan (%s)", cd->origin, cd->plan_file);
	else if (cd->plan_url)
		pathf(origin, sizeof origin, "%s.plan (%s)", cd->origin, cd->plan_url);
	else
		pathf(origin, sizeof origin, "%s.plan", cd->origin);
	kgb_plan_t *plan = NULL;
	if (kgb_plan_parse(cd->plan_json, strlen(cd->plan_json), origin, &plan, sub, sizeof sub) != 0 ||
	    kgb_plan_check(plan, op, origin, sub, sizeof sub) != 0) {
		kgb_plan_destroy(&plan);
		return kgb_err(c->err, c->errlen, "%s", sub);
	}
	if (planp)
		*planp = plan;
	else
		kgb_plan_destroy(&plan);
	return 0;
}

/* With the plan known: every kernel source must be among the sources. Missing ones
 * get a default location when allowed, else it is an error. */
static int plan_sources(mctx_t *c, kgb_candidate_t *cd, const kgb_plan_t *plan, bool add_defaults,
                        const char *plan_dir_file, const char *plan_dir_url)
{
	for (size_t k = 0; k < plan->nkernels; k++) {
		const char *name = plan->kernels[k].source;
		if (find_source(cd, name))
			continue;
		if (!add_defaults)
			return kgb_err(c->err, c->errlen, "%s.sources: kernel %zu's source '%s' is not included", cd->origin, k,
			               name);
		kgb_source_t *s = add_source(cd, name);
		if (plan_dir_url)
			s->url = kgb_xasprintf("%s%s", plan_dir_url, name);
		else if (plan_dir_file && *plan_dir_file)
			s->file = kgb_xasprintf("%s/%s", plan_dir_file, name);
		else
			s->file = kgb_xstrdup(name);
	}
	return 0;
}

/* Every kernel source the plan compiles may read no file but itself, and its
 * options name none (srcscan.h). Sources not read yet are checked once they are. */
static int check_sources_read_nothing(mctx_t *c, kgb_candidate_t *cd, const kgb_plan_t *plan)
{
	char sub[512], what[600];
	for (size_t k = 0; k < plan->nkernels; k++) {
		const kgb_plan_kernel_t *kn = &plan->kernels[k];
		const kgb_source_t *src = find_source(cd, kn->source);
		if (src && src->content) {
			pathf(what, sizeof what, "%s.sources.%s", cd->origin, src->name);
			if (kgb_src_check(src->content, src->len, kn->lang, what, sub, sizeof sub) != 0)
				return kgb_err(c->err, c->errlen, "%s", sub);
		}
		if (kn->lang == KGB_LANG_OPENCL && kn->options && !strchr(kn->options, '{') &&
		    kgb_src_check_ocl_options(kn->options, sub, sizeof sub) != 0)
			return kgb_err(c->err, c->errlen, "%s.plan: kernels[%zu].options: %s", cd->origin, k, sub);
	}
	return 0;
}

/* ---- case selections ---- */

/* The value of PARAM in a case label ("k=v k2=v2"), copied into buf; false if absent. */
static bool label_value(const char *label, const char *param, char *buf, size_t n)
{
	size_t pl = strlen(param);
	for (const char *t = label; *t;) {
		while (*t == ' ')
			t++;
		const char *end = strchr(t, ' ');
		size_t len = end ? (size_t)(end - t) : strlen(t);
		if (len > pl && strncmp(t, param, pl) == 0 && t[pl] == '=') {
			snprintf(buf, n, "%.*s", (int)(len - pl - 1), t + pl + 1);
			return true;
		}
		t += len;
	}
	return false;
}

/* A "where" value as label text: strings as they are, integers in decimal, other
 * numbers in %g. */
static void where_text(json_t *v, char *buf, size_t n)
{
	if (json_is_string(v))
		snprintf(buf, n, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, n, "%lld", (long long)json_integer_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, n, "%s", json_is_true(v) ? "true" : "false");
	else
		snprintf(buf, n, "%g", json_number_value(v));
}

/* A case matches when each parameter has one of the listed values; null stands for
 * "the case has no such parameter" (labels leave defaults out: a contiguous layout). */
static bool where_matches(json_t *where, const char *label)
{
	const char *k;
	json_t *v;
	json_object_foreach(where, k, v)
	{
		char have[192], want[192];
		bool has = label_value(label, k, have, sizeof have);
		bool any = false;
		if (json_is_array(v)) {
			size_t i;
			json_t *e;
			json_array_foreach(v, i, e)
			{
				if (json_is_null(e)) {
					any |= !has;
					continue;
				}
				where_text(e, want, sizeof want);
				any |= has && strcmp(have, want) == 0;
			}
		} else if (json_is_null(v)) {
			any = !has;
		} else {
			where_text(v, want, sizeof want);
			any = has && strcmp(have, want) == 0;
		}
		if (!any)
			return false;
	}
	return true;
}

static bool scalar_ok(json_t *v)
{
	return json_is_string(v) || json_is_number(v) || json_is_boolean(v) || json_is_null(v);
}

/* Check the shape of a candidate's "cases" and keep it as text; the cases it selects
 * are checked against the catalog by kgb_manifest_select_cases. */
static int parse_selection(mctx_t *c, const kgb_manifest_t *m, kgb_candidate_t *cd, const char *path, json_t *v)
{
	char p[360];
	json_t *idx = NULL, *where = NULL;
	pathf(p, sizeof p, "%s.cases", path);
	if (json_is_array(v)) {
		idx = v;
	} else if (json_is_object(v)) {
		static const char *const keys[] = {"indices", "where", NULL};
		if (check_keys(c, p, v, keys) != 0)
			return -1;
		idx = json_object_get(v, "indices");
		where = json_object_get(v, "where");
		if (!idx && !where)
			return merr(c, p, "expected \"indices\" or \"where\" (or both), got %s", show(v));
	} else {
		return merr(c, p, "expected a list of case indices or {\"indices\": [...], \"where\": {...}}, got %s",
		            show(v));
	}
	if (idx) {
		if (!json_is_array(idx) || json_array_size(idx) == 0)
			return merr(c, p, "expected a non-empty list of case indices, got %s", show(idx));
		size_t i;
		json_t *e;
		json_array_foreach(idx, i, e)
		{
			if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > UINT32_MAX) {
				char q[380];
				pathf(q, sizeof q, "%s[%zu]", p, i);
				return merr(c, q, "expected a case index (an integer >= 0), got %s", show(e));
			}
		}
	}
	if (where) {
		char q[380];
		pathf(q, sizeof q, "%s.where", p);
		if (!json_is_object(where) || json_object_size(where) == 0)
			return merr(c, q, "expected an object of PARAMETER: value or [values], got %s", show(where));
		const char *k;
		json_t *wv;
		json_object_foreach(where, k, wv)
		{
			bool good = scalar_ok(wv);
			if (json_is_array(wv) && json_array_size(wv) > 0) {
				size_t i;
				json_t *e;
				good = true;
				json_array_foreach(wv, i, e) good &= scalar_ok(e);
			}
			if (!good) {
				char r[400];
				pathf(r, sizeof r, "%s.%s", q, k);
				return merr(c, r, "expected a value or a non-empty list of values, got %s", show(wv));
			}
		}
	}
	cd->cases_json = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
	KGB_ASSERT(cd->cases_json);
	uint32_t *sel = NULL;
	size_t nsel = 0;
	char err[512];
	if (kgb_manifest_select_cases(cd, m->smoke, &sel, &nsel, err, sizeof err) != 0) {
		/* err already names the candidate and the field */
		snprintf(c->err, c->errlen, "%s", err);
		return -1;
	}
	free(sel);
	return 0;
}

int kgb_manifest_select_cases(const kgb_candidate_t *cd, bool smoke, uint32_t **idx, size_t *n, char *err,
                              size_t errlen)
{
	const kgb_op_t *op = kgb_catalog_find(cd->op);
	*idx = NULL;
	*n = 0;
	if (!op) {
		snprintf(err, errlen, "%s.operator: unknown operator '%s'", cd->origin, cd->op);
		return -1;
	}
	uint32_t count = smoke ? kgb_op_smoke_case_count(op) : kgb_op_case_count(op);
	json_t *v = NULL, *ix = NULL, *where = NULL;
	if (cd->cases_json) {
		json_error_t je;
		v = json_loads(cd->cases_json, 0, &je);
		if (!v) {
			snprintf(err, errlen, "%s.cases: not valid JSON: %s", cd->origin, je.text);
			return -1;
		}
		ix = json_is_array(v) ? v : json_object_get(v, "indices");
		where = json_is_object(v) ? json_object_get(v, "where") : NULL;
	}
	bool *want = kgb_xcalloc(count + 1, sizeof *want);
	int rc = -1;
	if (ix) {
		size_t i;
		json_t *e;
		json_array_foreach(ix, i, e)
		{
			json_int_t k = json_integer_value(e);
			if (k < 0 || k >= (json_int_t)count) {
				snprintf(err, errlen, "%s.cases: case index %lld is out of range: '%s' has %u cases%s (0..%u)",
				         cd->origin, (long long)k, cd->op, count, smoke ? " in its smoke subset" : "",
				         count ? count - 1 : 0);
				goto out;
			}
			want[k] = true;
		}
	} else {
		for (uint32_t k = 0; k < count; k++)
			want[k] = true;
	}
	if (where) {
		const char *pname;
		json_t *pv;
		/* a parameter no case has is a typo, not an empty selection */
		json_object_foreach(where, pname, pv)
		{
			bool seen = false;
			char known[256] = "";
			for (uint32_t k = 0; k < count && !seen; k++) {
				kgb_case_t kc;
				char cerr[256], val[192];
				if (kgb_case_build(op, k, &kc, cerr, sizeof cerr) != 0)
					continue;
				seen = label_value(kc.label, pname, val, sizeof val);
				if (k == 0) {
					/* the parameter names of the first case, for the message */
					for (const char *t = kc.label; *t;) {
						const char *eq = strchr(t, '='), *sp = strchr(t, ' ');
						if (!eq || (sp && sp < eq))
							break;
						size_t kl = strlen(known);
						snprintf(known + kl, sizeof known - kl, "%s%.*s", kl ? ", " : "", (int)(eq - t), t);
						if (!sp)
							break;
						t = sp + 1;
					}
				}
				kgb_case_release(&kc);
			}
			if (!seen) {
				snprintf(err, errlen, "%s.cases.where.%s: no case of '%s' has a parameter '%s' (parameters: %s)",
				         cd->origin, pname, cd->op, pname, known[0] ? known : "none");
				goto out;
			}
		}
		for (uint32_t k = 0; k < count; k++) {
			if (!want[k])
				continue;
			kgb_case_t kc;
			char cerr[256];
			if (kgb_case_build(op, k, &kc, cerr, sizeof cerr) != 0) {
				want[k] = false;
				continue;
			}
			want[k] = where_matches(where, kc.label);
			kgb_case_release(&kc);
		}
	}
	uint32_t *out = kgb_xcalloc(count + 1, sizeof *out);
	size_t m = 0;
	for (uint32_t k = 0; k < count; k++)
		if (want[k])
			out[m++] = k;
	if (m == 0) {
		free(out);
		snprintf(err, errlen, "%s.cases: %s selects no case of '%s'", cd->origin,
		         cd->cases_json ? cd->cases_json : "the selection", cd->op);
		goto out;
	}
	*idx = out;
	*n = m;
	rc = 0;
out:
	free(want);
	json_decref(v);
	return rc;
}

bool kgb_manifest_is_partial(const kgb_manifest_t *m)
{
	for (size_t i = 0; i < m->ncandidates; i++)
		if (m->candidates[i].cases_json)
			return true;
	return false;
}

/* A plan object with a "kind" (the stored form of python and native candidates):
 * check it, and that a python candidate's module is among its sources. */
static int check_kind_plan(mctx_t *c, kgb_candidate_t *cd, const char *path, bool require_resolved)
{
	char sub[512], *module = NULL;
	int kind = kgb_plan_kind(cd->plan_json, strlen(cd->plan_json), path, &module, sub, sizeof sub);
	if (kind < 0)
		return kgb_err(c->err, c->errlen, "%s: %s", c->origin, sub);
	int rc = 0;
	if (kind == KGB_CAND_PYTHON) {
		kgb_source_t *src = find_source(cd, module);
		if (!src)
			rc = kgb_err(c->err, c->errlen, "%s: %s.module: '%s' is not one of the candidate's sources", c->origin,
			             path, module);
		else if (require_resolved && !src->content)
			rc = kgb_err(c->err, c->errlen, "%s: %s.module: '%s' has no content", c->origin, path, module);
	} else if (kind == KGB_CAND_NATIVE && cd->nsources) {
		rc = kgb_err(c->err, c->errlen, "%s: %s: a native candidate has no sources (got %zu)", c->origin, path,
		             cd->nsources);
	} else if (kind == KGB_CAND_PLAN) {
		rc = kgb_err(c->err, c->errlen, "%s: %s.kind: \"plan\" is the default; give the launch plan itself",
		             c->origin, path);
	}
	free(module);
	return rc;
}

/* The user's form of the other kinds: "kind": "native", or "kind": "python" with
 * "module": a file name (relative to the manifest) or {"inline": text}. */
static int parse_kind(mctx_t *c, kgb_candidate_t *cd, const char *path, json_t *v, json_t *kd, json_t *pl,
                      bool require_resolved)
{
	char p[340];
	const char *k = json_string_value(kd);
	pathf(p, sizeof p, "%s.kind", path);
	if (!k)
		return merr(c, p, kd ? "expected \"plan\", \"python\" or \"native\", got %s"
		                     : "missing: a candidate with a \"module\" is of kind \"python\"%s",
		            kd ? show(kd) : "");
	if (pl) {
		pathf(p, sizeof p, "%s.plan", path);
		return merr(c, p, "a candidate of kind '%s' has no plan (the plan is made from it)", k);
	}
	json_t *mod = json_object_get(v, "module");
	if (strcmp(k, "native") == 0) {
		if (mod || cd->nsources) {
			pathf(p, sizeof p, "%s.%s", path, mod ? "module" : "sources");
			return merr(c, p, "a native candidate has no module or sources: the worker runs the operator's library");
		}
		cd->plan_json = kgb_xstrdup("{\"kind\":\"native\"}");
		return 0;
	}
	if (strcmp(k, "python") != 0)
		return merr(c, p, "unknown candidate kind '%s' (plan, python, native)", k);
	pathf(p, sizeof p, "%s.module", path);
	if (!mod)
		return merr(c, p, "missing (a python candidate names its module file)");
	const char *name;
	kgb_source_t *src;
	if (json_is_string(mod)) {
		const char *file = json_string_value(mod);
		if (require_resolved)
			return merr(c, p, "expected {\"inline\": ...}, got a file name %s", show(mod));
		const char *base = strrchr(file, '/');
		name = base ? base + 1 : file;
		if (!*file || !plain_file_name(name))
			return merr(c, p, "'%s' does not name a file", file);
		if (find_source(cd, name))
			return merr(c, p, "'%s' is also one of the sources", name);
		src = add_source(cd, name);
		src->file = kgb_xstrdup(file);
	} else {
		json_t *text = json_is_object(mod) && json_object_size(mod) == 1 ? json_object_get(mod, "inline") : NULL;
		if (!json_is_string(text))
			return merr(c, p, "expected a file name or {\"inline\": text}, got %s", show(mod));
		name = "module.py";
		if (find_source(cd, name))
			return merr(c, p, "'%s' is also one of the sources", name);
		src = add_source(cd, name);
		src->len = json_string_length(text);
		src->content = kgb_xmalloc(src->len + 1);
		memcpy(src->content, json_string_value(text), src->len + 1);
	}
	json_t *o = json_pack("{s:s,s:s}", "kind", "python", "module", name);
	cd->plan_json = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return 0;
}

const char *const kgb_usage_keys[KGB_USAGE_N] = {"input", "output", "cache_write", "cache_read", "reasoning"};

/* A candidate's "round", "sample", "model" and "usage" (manifest.h). */
static int parse_sample(mctx_t *c, kgb_candidate_t *cd, const char *path, json_t *v)
{
	char p[340];
	static const char *const ikeys[] = {"round", "sample"};
	uint32_t *ivals[] = {&cd->round, &cd->sample};
	for (int i = 0; i < 2; i++) {
		json_t *x = json_object_get(v, ikeys[i]);
		if (!x)
			continue;
		pathf(p, sizeof p, "%s.%s", path, ikeys[i]);
		if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > INT32_MAX)
			return merr(c, p, "expected an integer 0..%d, got %s", INT32_MAX, show(x));
		*ivals[i] = (uint32_t)json_integer_value(x);
	}
	json_t *x = json_object_get(v, "model");
	if (x) {
		pathf(p, sizeof p, "%s.model", path);
		if (!json_is_string(x))
			return merr(c, p, "expected a model name (a string), got %s", show(x));
		cd->model = kgb_xstrdup(json_string_value(x));
	}
	json_t *u = json_object_get(v, "usage");
	if (!u)
		return 0;
	pathf(p, sizeof p, "%s.usage", path);
	if (!json_is_object(u))
		return merr(c, p, "expected {\"input\": N, \"output\": N, \"cache_write\": N, \"cache_read\": N, "
		            "\"reasoning\": N}, got %s", show(u));
	const char *key;
	json_t *n;
	json_object_foreach(u, key, n) {
		int k = 0;
		while (k < KGB_USAGE_N && strcmp(key, kgb_usage_keys[k]) != 0)
			k++;
		pathf(p, sizeof p, "%s.usage.%s", path, key);
		if (k == KGB_USAGE_N)
			return merr(c, p, "unknown kind of usage (input, output, cache_write, cache_read or reasoning)");
		if (!json_is_integer(n) || json_integer_value(n) < 0)
			return merr(c, p, "expected a token count (an integer >= 0), got %s", show(n));
		cd->usage[k] = json_integer_value(n);
	}
	return 0;
}

static int parse_candidate(mctx_t *c, kgb_manifest_t *m, const char *method, const char *path, json_t *v,
                           bool require_resolved)
{
	static const char *const keys[] = {"operator", "plan",  "tokens", "gen_seconds", "sources", "kind",
	                                   "module",   "cases", "round",  "sample",      "model",   "usage", NULL};
	char p[320];
	if (!json_is_object(v))
		return merr(c, path, "expected a candidate object, got %s", show(v));
	if (check_keys(c, path, v, keys) != 0)
		return -1;
	m->candidates = kgb_xrealloc(m->candidates, (m->ncandidates + 1) * sizeof *m->candidates);
	kgb_candidate_t *cd = &m->candidates[m->ncandidates++];
	memset(cd, 0, sizeof *cd);
	for (int k = 0; k < KGB_USAGE_N; k++)
		cd->usage[k] = -1;
	cd->method = kgb_xstrdup(method);
	cd->origin = kgb_xasprintf("%s: %s", c->origin, path);

	json_t *o = json_object_get(v, "operator");
	pathf(p, sizeof p, "%s.operator", path);
	if (!json_is_string(o))
		return merr(c, p, o ? "expected an operator name, got %s" : "missing (an operator name is required)%s",
		            o ? show(o) : "");
	const char *opname = json_string_value(o);
	if (!kgb_catalog_find(opname))
		return merr(c, p, "unknown operator '%s'", opname);
	if (!has_op(m, opname))
		return merr(c, p, "operator '%s' is not one of the campaign's operators", opname);
	cd->op = kgb_xstrdup(opname);
	if (parse_sample(c, cd, path, v) != 0)
		return -1;
	for (size_t i = 0; i + 1 < m->ncandidates; i++) {
		const kgb_candidate_t *o2 = &m->candidates[i];
		if (strcmp(o2->method, method) != 0 || strcmp(o2->op, opname) != 0 || o2->round != cd->round ||
		    o2->sample != cd->sample)
			continue;
		pathf(p, sizeof p, "%s.operator", path);
		if (cd->round == 0 && cd->sample == 0)
			return merr(c, p, "method '%s' already has a candidate for '%s' (%s)", method, opname, o2->origin);
		return merr(c, p, "method '%s' already has a candidate for '%s' in round %u, sample %u (%s)", method,
		            opname, cd->round, cd->sample, o2->origin);
	}

	const char *numkeys[] = {"tokens", "gen_seconds"};
	double *nums[] = {&cd->tokens, &cd->gen_seconds};
	for (int i = 0; i < 2; i++) {
		json_t *x = json_object_get(v, numkeys[i]);
		if (!x)
			continue;
		pathf(p, sizeof p, "%s.%s", path, numkeys[i]);
		if (!json_is_number(x) || json_number_value(x) < 0)
			return merr(c, p, "expected a number >= 0, got %s", show(x));
		*nums[i] = json_number_value(x);
	}
	if (!json_object_get(v, "tokens") && json_object_get(v, "usage")) {
		cd->tokens = 0;
		for (int k = 0; k <= KGB_USAGE_CACHE_READ; k++)
			cd->tokens += cd->usage[k] > 0 ? (double)cd->usage[k] : 0;
	}

	json_t *sel = json_object_get(v, "cases");
	if (sel && parse_selection(c, m, cd, path, sel) != 0)
		return -1;

	json_t *s = json_object_get(v, "sources");
	if (s && parse_sources(c, cd, path, s, require_resolved) != 0)
		return -1;

	json_t *pl = json_object_get(v, "plan");
	json_t *kd = json_object_get(v, "kind");
	if (kd || json_object_get(v, "module"))
		return parse_kind(c, cd, path, v, kd, pl, require_resolved);
	pathf(p, sizeof p, "%s.plan", path);
	if (!pl)
		return merr(c, p, "missing (a file name, {\"url\": ...} or an inline plan object)");
	if (json_is_string(pl)) {
		if (require_resolved)
			return merr(c, p, "expected an inline plan, got a file name %s", show(pl));
		if (!*json_string_value(pl))
			return merr(c, p, "empty file name");
		cd->plan_file = kgb_xstrdup(json_string_value(pl));
		return 0;
	}
	if (!json_is_object(pl))
		return merr(c, p, "expected a file name, {\"url\": ...} or an inline plan object, got %s", show(pl));
	json_t *url = json_object_get(pl, "url");
	if (url && !json_object_get(pl, "kernels")) {
		char q[340];
		pathf(q, sizeof q, "%s.url", p);
		if (require_resolved)
			return merr(c, q, "expected an inline plan, got a URL %s", show(url));
		if (json_object_size(pl) != 1)
			return merr(c, p, "a {\"url\": ...} plan has no other keys, got %s", show(pl));
		if (!json_is_string(url) || (strncmp(json_string_value(url), "http://", 7) != 0 &&
		                             strncmp(json_string_value(url), "https://", 8) != 0))
			return merr(c, q, "expected an http:// or https:// URL, got %s", show(url));
		cd->plan_url = kgb_xstrdup(json_string_value(url));
		return 0;
	}
	/* inline plan: keep its compact text, parse and check it now */
	cd->plan_json = json_dumps(pl, JSON_COMPACT | JSON_PRESERVE_ORDER);
	KGB_ASSERT(cd->plan_json);
	if (json_object_get(pl, "kind"))
		return check_kind_plan(c, cd, p, require_resolved);
	kgb_plan_t *plan = NULL;
	if (check_plan_text(c, cd, &plan) != 0)
		return -1;
	int rc = plan_sources(c, cd, plan, !require_resolved, "", NULL);
	if (rc == 0)
		rc = check_sources_read_nothing(c, cd, plan);
	kgb_plan_destroy(&plan);
	return rc;
}

/* "native": true on a method: a native candidate for each of the campaign's operators. */
static int add_native_candidates(mctx_t *c, kgb_manifest_t *m, const char *method, const char *path)
{
	for (size_t i = 0; i < m->nops; i++) {
		char p[128];
		pathf(p, sizeof p, "%s.native[%s]", path, m->ops[i]);
		json_t *v = json_pack("{s:s,s:s}", "operator", m->ops[i], "kind", "native");
		int rc = parse_candidate(c, m, method, p, v, false);
		json_decref(v);
		if (rc != 0)
			return -1;
	}
	return 0;
}

static int parse_root(mctx_t *c, kgb_manifest_t *m, json_t *root, bool require_resolved)
{
	static const char *const keys[] = {"name",  "operators", "platforms", "seed", "heldout", "shard_size",
	                                   "time_limit_ms", "timing_budget_ms", "timing", "priority",
	                                   "baseline", "methods", "cases", "aa", NULL};
	if (!json_is_object(root))
		return merr(c, NULL, "expected a manifest object, got %s", show(root));
	if (check_keys(c, "", root, keys) != 0)
		return -1;
	json_t *v = json_object_get(root, "name");
	if (!json_is_string(v) || !*json_string_value(v))
		return merr(c, "name", v ? "expected a non-empty string, got %s" : "missing (a campaign name is required)%s",
		            v ? show(v) : "");
	const char *why = campaign_name_problem(json_string_value(v));
	if (why) {
		char shown[400];
		return merr(c, "name", "'%s': %s", shown_name(json_string_value(v), shown, sizeof shown), why);
	}
	m->name = kgb_xstrdup(json_string_value(v));
	if (parse_operators(c, m, json_object_get(root, "operators")) != 0 ||
	    parse_platforms(c, m, json_object_get(root, "platforms")) != 0)
		return -1;
	long long x;
	if (get_uint(c, root, "seed", 0, INT64_MAX, 0, &x) != 0)
		return -1;
	m->seed = (uint64_t)x;
	m->seed_fixed = json_object_get(root, "seed") != NULL;
	if (get_uint(c, root, "heldout", 0, KGB_HELDOUT_MAX, KGB_HELDOUT_DEFAULT, &x) != 0)
		return -1;
	m->heldout = (uint32_t)x;
	if (get_uint(c, root, "shard_size", 1, 4096, 32, &x) != 0)
		return -1;
	m->shard_size = (uint32_t)x;
	if (get_uint(c, root, "time_limit_ms", 100, 86400000, 120000, &x) != 0)
		return -1;
	m->time_limit_ms = (uint32_t)x;
	if (get_uint(c, root, "timing_budget_ms", 1, 600000, 500, &x) != 0)
		return -1;
	m->timing_budget_ms = (uint32_t)x;
	if (get_uint(c, root, "priority", -1000000, 1000000, 0, &x) != 0)
		return -1;
	m->priority = (int)x;
	v = json_object_get(root, "timing");
	m->timing = true;
	if (v) {
		if (!json_is_boolean(v))
			return merr(c, "timing", "expected true or false, got %s", show(v));
		m->timing = json_is_true(v);
	}
	v = json_object_get(root, "cases");
	m->smoke = false;
	if (v) {
		const char *cs = json_is_string(v) ? json_string_value(v) : NULL;
		if (cs && strcmp(cs, "smoke") == 0)
			m->smoke = true;
		else if (!cs || strcmp(cs, "all") != 0)
			return merr(c, "cases", "expected \"all\" or \"smoke\", got %s", show(v));
	}

	json_t *ms = json_object_get(root, "methods");
	if (!ms)
		return merr(c, "methods", "missing (a non-empty list of methods is required)");
	if (!json_is_array(ms) || json_array_size(ms) == 0)
		return merr(c, "methods", "expected a non-empty list of methods, got %s", show(ms));
	m->methods = kgb_xcalloc(json_array_size(ms), sizeof *m->methods);
	for (size_t i = 0; i < json_array_size(ms); i++) {
		static const char *const mkeys[] = {"name", "description", "candidates", "native", NULL};
		json_t *me = json_array_get(ms, i);
		char p[64], q[96];
		pathf(p, sizeof p, "methods[%zu]", i);
		if (!json_is_object(me))
			return merr(c, p, "expected a method object, got %s", show(me));
		if (check_keys(c, p, me, mkeys) != 0)
			return -1;
		json_t *nm = json_object_get(me, "name");
		pathf(q, sizeof q, "%s.name", p);
		if (!json_is_string(nm))
			return merr(c, q, nm ? "expected a method name, got %s" : "missing (a method name is required)%s",
			            nm ? show(nm) : "");
		const char *name = json_string_value(nm);
		if (!valid_name(name)) {
			char shown[400];
			return merr(c, q, "'%s' is not a valid method name (1 to %d letters, digits, _ - . +)",
			            shown_name(name, shown, sizeof shown), KGB_NAME_MAX);
		}
		for (size_t j = 0; j < m->nmethods; j++)
			if (strcmp(m->methods[j].name, name) == 0)
				return merr(c, q, "method '%s' is defined twice (also methods[%zu])", name, j);
		kgb_method_t *mt = &m->methods[m->nmethods++];
		mt->name = kgb_xstrdup(name);
		if (kgb_jctx_get_str(c, p, me, "description", false, &mt->description) != 0)
			return -1;
		json_t *cs = json_object_get(me, "candidates");
		json_t *nat = json_object_get(me, "native");
		if (nat) {
			pathf(q, sizeof q, "%s.native", p);
			if (!json_is_true(nat))
				return merr(c, q, "expected true (leave it out otherwise), got %s", show(nat));
			if (cs)
				return merr(c, q, "a native method has no candidates: one native candidate per operator is made");
			if (add_native_candidates(c, m, name, p) != 0)
				return -1;
			continue;
		}
		pathf(q, sizeof q, "%s.candidates", p);
		if (!cs)
			return merr(c, q, "missing (a list of candidates is required, or \"native\": true)");
		if (!json_is_array(cs))
			return merr(c, q, "expected a list of candidates, got %s", show(cs));
		for (size_t k = 0; k < json_array_size(cs); k++) {
			char r[128];
			pathf(r, sizeof r, "%s.candidates[%zu]", p, k);
			if (parse_candidate(c, m, name, r, json_array_get(cs, k), require_resolved) != 0)
				return -1;
		}
	}
	if (m->ncandidates == 0)
		return merr(c, "methods", "no method has any candidate");
	v = json_object_get(root, "baseline");
	if (v) {
		if (!json_is_string(v))
			return merr(c, "baseline", "expected a method name, got %s", show(v));
		const char *b = json_string_value(v);
		bool found = false;
		for (size_t j = 0; j < m->nmethods; j++)
			if (strcmp(m->methods[j].name, b) == 0)
				found = true;
		if (!found)
			return merr(c, "baseline", "'%s' is not one of the manifest's methods", b);
		m->baseline = kgb_xstrdup(b);
	}
	v = json_object_get(root, "aa");
	if (v) {
		if (!json_is_boolean(v))
			return merr(c, "aa", "expected true or false, got %s", show(v));
		m->aa = json_is_true(v);
		if (m->aa && !m->baseline)
			return merr(c, "aa", "an A/A check times the baseline twice: the manifest names no \"baseline\"");
		if (m->aa) {
			char *aa = kgb_xasprintf("%s" KGB_AA_SUFFIX, m->baseline);
			for (size_t j = 0; j < m->nmethods; j++)
				if (strcmp(m->methods[j].name, aa) == 0) {
					merr(c, "aa", "the A/A replicate is named '%s', which methods[%zu] already is", aa, j);
					free(aa);
					return -1;
				}
			free(aa);
		}
	}
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? kgb_xstrdup(s) : NULL;
}

/* The coordinator's form of an A/A manifest: every candidate of the baseline again,
 * under the replicate's name, after all the others (so its jobs come at other moments
 * than the baseline's own). */
static void add_aa_replicate(kgb_manifest_t *m)
{
	char *aa = kgb_xasprintf("%s" KGB_AA_SUFFIX, m->baseline);
	size_t n = m->ncandidates;
	m->methods = kgb_xrealloc(m->methods, (m->nmethods + 1) * sizeof *m->methods);
	m->methods[m->nmethods].name = kgb_xstrdup(aa);
	m->methods[m->nmethods].description =
	    kgb_xasprintf("the baseline %s timed again in jobs of its own (A/A check)", m->baseline);
	m->nmethods++;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(m->candidates[i].method, m->baseline) != 0)
			continue;
		m->candidates = kgb_xrealloc(m->candidates, (m->ncandidates + 1) * sizeof *m->candidates);
		const kgb_candidate_t *s = &m->candidates[i];
		kgb_candidate_t *d = &m->candidates[m->ncandidates++];
		*d = *s;
		d->method = kgb_xstrdup(aa);
		d->op = kgb_xstrdup(s->op);
		d->plan_json = dup_or_null(s->plan_json);
		d->plan_file = dup_or_null(s->plan_file);
		d->plan_url = dup_or_null(s->plan_url);
		d->cases_json = dup_or_null(s->cases_json);
		d->origin = kgb_xasprintf("%s (A/A replicate)", s->origin);
		d->model = dup_or_null(s->model);
		d->sources = kgb_xcalloc(s->nsources + 1, sizeof *d->sources);
		for (size_t k = 0; k < s->nsources; k++) {
			const kgb_source_t *a = &s->sources[k];
			kgb_source_t *b = &d->sources[k];
			b->name = dup_or_null(a->name);
			b->file = dup_or_null(a->file);
			b->url = dup_or_null(a->url);
			b->len = a->len;
			if (a->content) {
				b->content = kgb_xmalloc(a->len + 1);
				memcpy(b->content, a->content, a->len);
				b->content[a->len] = '\0';
			}
		}
	}
	free(aa);
}

/* Parse a manifest; see manifest.h. */
static int check_candidate_size(mctx_t *c, const kgb_candidate_t *cd);

int kgb_manifest_parse(const char *json, size_t len, const char *origin, bool require_resolved,
                       kgb_manifest_t **out, char *err, size_t errlen)
{
	mctx_t c = {.origin = origin && *origin ? origin : "manifest", .err = err, .errlen = errlen};
	json_error_t je;
	*out = NULL;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return kgb_err(err, errlen, "%s: line %d column %d: %s", c.origin, je.line, je.column, je.text);
	kgb_manifest_t *m = kgb_xcalloc(1, sizeof *m);
	int rc = parse_root(&c, m, root, require_resolved);
	json_decref(root);
	/* the coordinator's form is complete: every candidate must fit a job */
	for (size_t i = 0; rc == 0 && require_resolved && i < m->ncandidates; i++)
		rc = check_candidate_size(&c, &m->candidates[i]);
	if (rc == 0 && require_resolved && m->aa)
		add_aa_replicate(m);
	if (rc != 0) {
		kgb_manifest_destroy(&m);
		return -1;
	}
	*out = m;
	return 0;
}

/* Free a manifest and everything in it; sets *m to NULL. */
void kgb_manifest_destroy(kgb_manifest_t **mp)
{
	if (!mp || !*mp)
		return;
	kgb_manifest_t *m = *mp;
	free(m->name);
	for (size_t i = 0; i < m->nops; i++)
		free(m->ops[i]);
	free(m->ops);
	free(m->dataset);
	for (size_t i = 0; i < m->nplatforms; i++)
		free(m->platforms[i]);
	free(m->platforms);
	free(m->baseline);
	for (size_t i = 0; i < m->nmethods; i++) {
		free(m->methods[i].name);
		free(m->methods[i].description);
	}
	free(m->methods);
	for (size_t i = 0; i < m->ncandidates; i++) {
		kgb_candidate_t *cd = &m->candidates[i];
		free(cd->method);
		free(cd->op);
		free(cd->plan_json);
		free(cd->plan_file);
		free(cd->plan_url);
		free(cd->origin);
		free(cd->cases_json);
		free(cd->model);
		for (size_t s = 0; s < cd->nsources; s++) {
			free(cd->sources[s].name);
			free(cd->sources[s].content);
			free(cd->sources[s].file);
			free(cd->sources[s].url);
		}
		free(cd->sources);
	}
	free(m->candidates);
	free(m);
	*mp = NULL;
}

/* ---- resolution ---- */

static char *join_path(const char *dir, const char *file)
{
	if (file[0] == '/' || !dir || !*dir || strcmp(dir, ".") == 0)
		return kgb_xstrdup(file);
	return kgb_xasprintf("%s/%s", dir, file);
}

/* The directory part of a relative path ("" for none). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return kgb_xstrdup("");
	char *d = kgb_xmalloc((size_t)(slash - path) + 1);
	memcpy(d, path, (size_t)(slash - path));
	d[slash - path] = '\0';
	return d;
}

static int fetch_url(mctx_t *c, kgb_fetch_fn fetch, const char *what, const char *url, char **content,
                     size_t *len)
{
	char sub[512];
	if (!fetch)
		return kgb_err(c->err, c->errlen, "%s: cannot fetch '%s': no URL support here", what, url);
	*content = fetch(url, len, sub, sizeof sub);
	if (!*content)
		return kgb_err(c->err, c->errlen, "%s: %s: %s", what, url, sub);
	return 0;
}

/* Read a plan or source file named in a manifest: inside basedir unless allowed
 * otherwise, a regular file, within the candidate limit. */
static char *read_named_file(const char *basedir, const char *file, unsigned flags, size_t *len, char *err,
                             size_t errlen)
{
	char *full = join_path(basedir, file);
	char *text = NULL;
	if (!(flags & KGB_MANIFEST_ALLOW_OUTSIDE)) {
		char *real = realpath(full, NULL);
		int e = errno;
		char *base = real ? realpath(basedir && *basedir ? basedir : ".", NULL) : NULL;
		if (real && !base)
			e = errno;
		if (!real || !base) {
			kgb_err(err, errlen, "%s: %s", real ? basedir : full, strerror(e));
			free(real);
			free(base);
			free(full);
			return NULL;
		}
		size_t bl = strlen(base);
		bool inside = strncmp(real, base, bl) == 0 && (real[bl] == '/' || (bl == 1 && base[0] == '/'));
		if (!inside) {
			kgb_err(err, errlen,
			        "'%s' resolves to '%s', outside the manifest's directory '%s'; a manifest may only name "
			        "files under its own directory (kgb submit/validate --allow-outside-sources to allow)",
			        file, real, base);
			free(real);
			free(base);
			free(full);
			return NULL;
		}
		free(base);
		free(full);
		full = real;
	}
	text = kgb_read_regular_file(full, KGB_MAX_CANDIDATE_BYTES, len, err, errlen);
	free(full);
	return text;
}

/* A candidate's plan and sources together must fit a job. */
static int check_candidate_size(mctx_t *c, const kgb_candidate_t *cd)
{
	size_t total = cd->plan_json ? strlen(cd->plan_json) : 0;
	for (size_t i = 0; i < cd->nsources; i++)
		total += cd->sources[i].len;
	if (total > KGB_MAX_CANDIDATE_BYTES)
		return kgb_err(c->err, c->errlen,
		               "%s: plan and sources are %zu bytes together, over the limit of %u bytes per candidate",
		               cd->origin, total, KGB_MAX_CANDIDATE_BYTES);
	return 0;
}

static int resolve_candidate(mctx_t *c, kgb_candidate_t *cd, const char *basedir, kgb_fetch_fn fetch,
                             unsigned flags)
{
	char sub[512], what[600];
	char *plan_dir = NULL, *plan_url_dir = NULL;
	kgb_plan_t *plan = NULL;
	int rc = -1;
	if (!cd->plan_json) {
		char *text = NULL;
		size_t len = 0;
		pathf(what, sizeof what, "%s.plan", cd->origin);
		if (cd->plan_file) {
			text = read_named_file(basedir, cd->plan_file, flags, &len, sub, sizeof sub);
			if (!text) {
				kgb_err(c->err, c->errlen, "%s: %s", what, sub);
				goto out;
			}
			plan_dir = dir_of(cd->plan_file);
		} else {
			KGB_ASSERT(cd->plan_url);
			if (fetch_url(c, fetch, what, cd->plan_url, &text, &len) != 0)
				goto out;
			const char *slash = strrchr(cd->plan_url, '/');
			size_t n = (size_t)(slash - cd->plan_url) + 1;
			plan_url_dir = kgb_xmalloc(n + 1);
			memcpy(plan_url_dir, cd->plan_url, n);
			plan_url_dir[n] = '\0';
		}
		/* normalise to compact JSON; errors name the plan's own file */
		json_error_t je;
		json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
		free(text);
		if (!root) {
			kgb_err(c->err, c->errlen, "%s (%s): line %d column %d: %s", what,
			        cd->plan_file ? cd->plan_file : cd->plan_url, je.line, je.column, je.text);
			goto out;
		}
		cd->plan_json = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(root);
		KGB_ASSERT(cd->plan_json);
		if (check_plan_text(c, cd, &plan) != 0)
			goto out;
		if (plan_sources(c, cd, plan, true, plan_dir, plan_url_dir) != 0)
			goto out;
	}
	for (size_t i = 0; i < cd->nsources; i++) {
		kgb_source_t *s = &cd->sources[i];
		if (s->content)
			continue;
		pathf(what, sizeof what, "%s.sources.%s", cd->origin, s->name);
		if (s->file) {
			s->content = read_named_file(basedir, s->file, flags, &s->len, sub, sizeof sub);
			if (!s->content) {
				kgb_err(c->err, c->errlen, "%s: %s", what, sub);
				goto out;
			}
		} else {
			KGB_ASSERT(s->url);
			if (fetch_url(c, fetch, what, s->url, &s->content, &s->len) != 0)
				goto out;
		}
		if (s->len > KGB_MAX_CANDIDATE_BYTES) {
			kgb_err(c->err, c->errlen, "%s: %zu bytes, over the limit of %u bytes per candidate", what, s->len,
			        KGB_MAX_CANDIDATE_BYTES);
			goto out;
		}
	}
	if (check_candidate_size(c, cd) != 0)
		goto out;
	if (!plan && cd->plan_json) {
		/* a plan read with the manifest (a kind's plan does not parse: no kernels) */
		char sub2[1024];
		if (kgb_plan_parse(cd->plan_json, strlen(cd->plan_json), cd->origin, &plan, sub2, sizeof sub2) != 0)
			kgb_plan_destroy(&plan);
	}
	if (plan && check_sources_read_nothing(c, cd, plan) != 0)
		goto out;
	rc = 0;
out:
	kgb_plan_destroy(&plan);
	free(plan_dir);
	free(plan_url_dir);
	return rc;
}

/* Read and fetch everything; see manifest.h. */
int kgb_manifest_resolve_ex(kgb_manifest_t *m, const char *basedir, kgb_fetch_fn fetch, unsigned flags, char *err,
                            size_t errlen)
{
	mctx_t c = {.origin = "manifest", .err = err, .errlen = errlen};
	for (size_t i = 0; i < m->ncandidates; i++)
		if (resolve_candidate(&c, &m->candidates[i], basedir, fetch, flags) != 0)
			return -1;
	return 0;
}

int kgb_manifest_resolve(kgb_manifest_t *m, const char *basedir, kgb_fetch_fn fetch, char *err, size_t errlen)
{
	return kgb_manifest_resolve_ex(m, basedir, fetch, 0, err, errlen);
}

/* ---- serialisation ---- */

static bool is_text(const char *p, size_t n)
{
	if (memchr(p, 0, n))
		return false;
	json_t *s = json_stringn(p, n); /* NULL when not valid UTF-8 */
	if (!s)
		return false;
	json_decref(s);
	return true;
}

/* The resolved manifest as JSON (caller frees); see manifest.h. Plans are inline
 * objects and sources {"inline": text} or, for binary content, {"base64": ...}. */
char *kgb_manifest_to_json(const kgb_manifest_t *m)
{
	json_t *root = json_object();
	json_object_set_new(root, "name", json_string(m->name));
	json_t *ops = json_array();
	for (size_t i = 0; i < m->nops; i++)
		json_array_append_new(ops, json_string(m->ops[i]));
	json_object_set_new(root, "operators", ops);
	if (m->nplatforms == 0)
		json_object_set_new(root, "platforms", json_string("all"));
	else {
		json_t *pl = json_array();
		for (size_t i = 0; i < m->nplatforms; i++)
			json_array_append_new(pl, json_string(m->platforms[i]));
		json_object_set_new(root, "platforms", pl);
	}
	if (m->seed_fixed)
		json_object_set_new(root, "seed", json_integer((json_int_t)m->seed));
	json_object_set_new(root, "heldout", json_integer(m->heldout));
	json_object_set_new(root, "shard_size", json_integer(m->shard_size));
	json_object_set_new(root, "time_limit_ms", json_integer(m->time_limit_ms));
	json_object_set_new(root, "timing_budget_ms", json_integer(m->timing_budget_ms));
	json_object_set_new(root, "timing", json_boolean(m->timing));
	json_object_set_new(root, "priority", json_integer(m->priority));
	json_object_set_new(root, "cases", json_string(m->smoke ? "smoke" : "all"));
	if (m->baseline)
		json_object_set_new(root, "baseline", json_string(m->baseline));
	if (m->aa)
		json_object_set_new(root, "aa", json_true());
	json_t *methods = json_array();
	char *aa = m->aa ? kgb_xasprintf("%s" KGB_AA_SUFFIX, m->baseline) : NULL;
	for (size_t i = 0; i < m->nmethods; i++) {
		if (aa && strcmp(m->methods[i].name, aa) == 0)
			continue; /* "aa": true makes it again */
		json_t *me = json_object();
		json_object_set_new(me, "name", json_string(m->methods[i].name));
		if (m->methods[i].description)
			json_object_set_new(me, "description", json_string(m->methods[i].description));
		json_t *cs = json_array();
		for (size_t k = 0; k < m->ncandidates; k++) {
			const kgb_candidate_t *cd = &m->candidates[k];
			if (strcmp(cd->method, m->methods[i].name) != 0)
				continue;
			KGB_ASSERT_MSG(cd->plan_json, "%s: plan not resolved", cd->origin);
			json_t *c = json_object();
			json_object_set_new(c, "operator", json_string(cd->op));
			json_error_t je;
			json_t *plan = json_loads(cd->plan_json, 0, &je);
			KGB_ASSERT_MSG(plan, "%s: %s", cd->origin, je.text);
			json_object_set_new(c, "plan", plan);
			json_object_set_new(c, "tokens", json_real(cd->tokens));
			json_object_set_new(c, "gen_seconds", json_real(cd->gen_seconds));
			if (cd->round)
				json_object_set_new(c, "round", json_integer(cd->round));
			if (cd->sample)
				json_object_set_new(c, "sample", json_integer(cd->sample));
			if (cd->model)
				json_object_set_new(c, "model", json_string(cd->model));
			json_t *us = json_object();
			for (int k = 0; k < KGB_USAGE_N; k++)
				if (cd->usage[k] >= 0)
					json_object_set_new(us, kgb_usage_keys[k], json_integer(cd->usage[k]));
			if (json_object_size(us))
				json_object_set_new(c, "usage", us);
			else
				json_decref(us);
			if (cd->cases_json) {
				json_t *sel = json_loads(cd->cases_json, 0, &je);
				KGB_ASSERT_MSG(sel, "%s: cases: %s", cd->origin, je.text);
				json_object_set_new(c, "cases", sel);
			}
			json_t *srcs = json_object();
			for (size_t s = 0; s < cd->nsources; s++) {
				const kgb_source_t *src = &cd->sources[s];
				KGB_ASSERT_MSG(src->content, "%s: source %s not resolved", cd->origin, src->name);
				json_t *o = json_object();
				if (is_text(src->content, src->len))
					json_object_set_new(o, "inline", json_stringn(src->content, src->len));
				else {
					char *b = b64_encode((const uint8_t *)src->content, src->len);
					json_object_set_new(o, "base64", json_string(b));
					free(b);
				}
				json_object_set_new(srcs, src->name, o);
			}
			json_object_set_new(c, "sources", srcs);
			json_array_append_new(cs, c);
		}
		json_object_set_new(me, "candidates", cs);
		json_array_append_new(methods, me);
	}
	free(aa);
	json_object_set_new(root, "methods", methods);
	char *s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(root);
	KGB_ASSERT(s);
	return s;
}
