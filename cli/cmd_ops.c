/* kgb ops: the operators of the linked catalog (no coordinator needed). */
#include <string.h>

#include "catalog.h"
#include "dtype.h"
#include "cli.h"
#include "output.h"
#include "util.h"

static const char *str_or(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

/* A tensor (or scalar) of an operator over all its cases: dtypes and ranks seen. */
typedef struct tinfo {
	const char *name;          /* static catalog string */
	int role;                  /* kgb_role_t; -1 for a scalar */
	unsigned dtypes;           /* bit per kgb_dtype_t */
	int min_rank, max_rank;
	char first[160];           /* shape and strides in the first case that has it */
} tinfo_t;

static const char *role_str(int r)
{
	return r < 0 ? "scalar" : r == KGB_ROLE_IN ? "in" : r == KGB_ROLE_OUT ? "out" : "inout";
}

static void dims_str(const int64_t *v, int n, char *out, size_t len)
{
	size_t k = (size_t)snprintf(out, len, "[");
	for (int i = 0; i < n && k < len; i++)
		k += (size_t)snprintf(out + k, len - k, "%s%lld", i ? "," : "", (long long)v[i]);
	if (k < len)
		snprintf(out + k, len - k, "]");
}

static tinfo_t *find_or_add(tinfo_t *v, size_t *n, const char *name, int role)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(v[i].name, name) == 0 && (v[i].role < 0) == (role < 0))
			return &v[i];
	if (*n >= KGB_MAX_TENSORS + KGB_MAX_SCALARS)
		return NULL;
	tinfo_t *t = &v[(*n)++];
	memset(t, 0, sizeof *t);
	t->name = name;
	t->role = role;
	t->min_rank = 99;
	t->max_rank = -1;
	return t;
}

static void dtypes_str(unsigned m, char *out, size_t len)
{
	size_t k = 0;
	out[0] = 0;
	for (int d = 0; d < 32 && k < len; d++)
		if (m & (1u << d))
			k += (size_t)snprintf(out + k, len - k, "%s%s", k ? "," : "", kgb_dtype_name((kgb_dtype_t)d));
}

/* The tensors and scalars of op over all its cases (in order of first appearance).
 * Returns the count, or -1 with err when a case does not build. */
static int collect_tensors(const kgb_op_t *op, tinfo_t *v, char *err, size_t errlen)
{
	size_t n = 0;
	uint32_t nc = kgb_op_case_count(op);
	for (uint32_t i = 0; i < nc; i++) {
		kgb_case_t c;
		if (kgb_case_build(op, i, &c, err, errlen) != 0)
			return -1;
		for (int t = 0; t < c.ntensors; t++) {
			tinfo_t *x = find_or_add(v, &n, c.t[t].name, (int)c.t[t].role);
			if (!x)
				continue;
			x->dtypes |= 1u << c.t[t].dtype;
			x->min_rank = c.t[t].ndim < x->min_rank ? c.t[t].ndim : x->min_rank;
			x->max_rank = c.t[t].ndim > x->max_rank ? c.t[t].ndim : x->max_rank;
			if (!x->first[0]) {
				char sh[48], st[48];
				dims_str(c.t[t].shape, c.t[t].ndim, sh, sizeof sh);
				dims_str(c.t[t].stride, c.t[t].ndim, st, sizeof st);
				snprintf(x->first, sizeof x->first, "case %u: shape %s strides %s", i, sh, st);
			}
		}
		for (int s = 0; s < c.nscalars; s++) {
			tinfo_t *x = find_or_add(v, &n, c.s[s].name, -1);
			if (x)
				x->dtypes |= 1u << c.s[s].dtype;
		}
		kgb_case_release(&c);
	}
	return (int)n;
}

/* kgb ops NAME: one operator, its tensors, its ATen overloads and every case with its
 * label. */
static int show_op(const kgb_op_t *op, bool json)
{
	const char *names[KGB_MAX_OVERLOADS];
	uint32_t counts[KGB_MAX_OVERLOADS];
	int no = kgb_op_overloads(op, names, counts);
	uint32_t nc = kgb_op_case_count(op);
	json_t *root = NULL, *cases = NULL;
	char ovl[96], err[256];

	tinfo_t ti[KGB_MAX_TENSORS + KGB_MAX_SCALARS];
	int nti = collect_tensors(op, ti, err, sizeof err);
	if (nti < 0) {
		fprintf(stderr, "kgb ops: %s: %s\n", op->name, err);
		return KGB_CLI_EXIT_USAGE;
	}
	char dts[160];
	if (json) {
		json_t *ol = json_array(), *tl = json_array();
		root = json_object();
		for (int i = 0; i < nti; i++) {
			json_t *o = json_object();
			dtypes_str(ti[i].dtypes, dts, sizeof dts);
			json_object_set_new(o, "name", json_string(ti[i].name));
			json_object_set_new(o, "role", json_string(role_str(ti[i].role)));
			json_object_set_new(o, "dtypes", json_string(dts));
			if (ti[i].role >= 0) {
				json_object_set_new(o, "min_rank", json_integer(ti[i].min_rank));
				json_object_set_new(o, "max_rank", json_integer(ti[i].max_rank));
			}
			json_array_append_new(tl, o);
		}
		cases = json_array();
		json_object_set_new(root, "name", json_string(op->name));
		json_object_set_new(root, "source", json_string(str_or(op->source, "")));
		json_object_set_new(root, "category", json_string(str_or(op->category, "")));
		json_object_set_new(root, "summary", json_string(str_or(op->summary, "")));
		json_object_set_new(root, "signature", json_string(str_or(op->signature, "")));
		json_object_set_new(root, "cases", json_integer(nc));
		json_object_set_new(root, "timed_cases", json_integer(kgb_op_timed_count(op)));
		json_object_set_new(root, "declared_cases", json_integer(op->declared_cases));
		json_object_set_new(root, "deviation", op->deviation ? json_string(op->deviation) : json_null());
		bool ho = kgb_op_has_heldout(op);
		json_object_set_new(root, "heldout", ho ? json_string(kgb_op_heldout_params(op)) : json_null());
		json_object_set_new(root, "heldout_cases", json_integer(ho ? KGB_HELDOUT_DEFAULT : 0));
		json_object_set_new(root, "no_heldout", ho ? json_null() : json_string(kgb_op_no_heldout_reason(op)));
		for (int i = 0; i < no; i++) {
			json_t *o = json_object();
			snprintf(ovl, sizeof ovl, "%s.%s", op->name, names[i]);
			json_object_set_new(o, "name", json_string(ovl));
			json_object_set_new(o, "cases", json_integer(counts[i]));
			json_array_append_new(ol, o);
		}
		json_object_set_new(root, "overloads", ol);
		json_object_set_new(root, "tensors", tl);
	} else {
		printf("%s (%s, %s): %s\nsignature: %s\n", op->name, str_or(op->source, "-"), str_or(op->category, "-"),
		       str_or(op->summary, "-"), str_or(op->signature, "-"));
		static const char *const th[] = { "TENSOR", "ROLE", "DTYPES", "RANK", "FIRST" };
		kgb_cli_table_t *t = kgb_cli_table_new(5, th, "lllrl");
		for (int i = 0; i < nti; i++) {
			dtypes_str(ti[i].dtypes, dts, sizeof dts);
			kgb_cli_table_cell(t, "%s", ti[i].name);
			kgb_cli_table_cell(t, "%s", role_str(ti[i].role));
			kgb_cli_table_cell(t, "%s", dts);
			if (ti[i].role < 0) {
				kgb_cli_table_cell(t, "-");
				kgb_cli_table_cell(t, "(plan symbol: %s)", ti[i].name);
			} else {
				if (ti[i].min_rank == ti[i].max_rank)
					kgb_cli_table_cell(t, "%d", ti[i].min_rank);
				else
					kgb_cli_table_cell(t, "%d-%d", ti[i].min_rank, ti[i].max_rank);
				kgb_cli_table_cell(t, "%s", ti[i].first);
			}
		}
		kgb_cli_table_print(t, stdout);
		kgb_cli_table_destroy(&t);
		printf("(a plan names a tensor argument as {\"tensor\": NAME}; expressions use NAME.numel, "
		       "NAME.size0.., NAME.stride0.., NAME.dtype)\n%u cases", nc);
		for (int i = 0; i < no; i++)
			printf("%s %s.%s %u", i ? "," : "; overloads:", op->name, names[i], counts[i]);
		/* how many and how they are drawn, never which sizes: those come from the
		 * campaign's key (docs/security.md, "Foreknowledge") */
		if (kgb_op_has_heldout(op))
			printf("\nheld-out cases: %d per candidate by default (the manifest's \"heldout\"), each a public "
			       "case with %s\nresized to sizes outside the public list",
			       KGB_HELDOUT_DEFAULT, kgb_op_heldout_params(op));
		else
			printf("\nheld-out cases: none: %s", kgb_op_no_heldout_reason(op));
		printf("\n");
	}
	for (uint32_t i = 0; i < nc; i++) {
		kgb_case_t c;
		if (kgb_case_build(op, i, &c, err, sizeof err) != 0) {
			fprintf(stderr, "kgb ops: %s case %u: %s\n", op->name, i, err);
			json_decref(root);
			return KGB_CLI_EXIT_USAGE;
		}
		const char *o = kgb_case_overload(&c, ovl, sizeof ovl);
		if (json) {
			json_t *e = json_object();
			json_object_set_new(e, "index", json_integer(i));
			json_object_set_new(e, "overload", o ? json_string(o) : json_null());
			json_object_set_new(e, "label", json_string(c.label));
			json_object_set_new(e, "timed", json_boolean(c.timed));
			json_array_append_new(cases, e);
		} else {
			printf("%6u %s%s\n", i, c.label, c.timed ? " (timed)" : "");
		}
		kgb_case_release(&c);
	}
	if (json) {
		json_object_set_new(root, "case_list", cases);
		kgb_cli_json_print(stdout, root);
	}
	return KGB_CLI_OK;
}

/* kgb ops [--dataset NAME] [--json] [OPERATOR]. */
int kgb_cli_cmd_ops(int argc, char **argv, kgb_cli_global_t *g)
{
	bool json = false;
	const char *dataset = "all";
	const kgb_cli_opt_t opts[] = {
		{ "dataset", 'd', KGB_CLI_OPT_STRING, &dataset, "NAME",
		  "aten (= mc), vllm, cublas, nocublas, ms, demo or all (default)" },
		{ "json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "print the operators as JSON" },
	};
	const kgb_cli_spec_t spec = {
		.name = "ops",
		.usage = "[--dataset NAME] [--json] [OPERATOR]",
		.summary = "List the operators of the catalog built into kgb: name, source, category,\n"
		           "dtypes, number of test cases and of performance-timed cases, and the size of\n"
		           "the smoke subset (the leading cases a manifest with \"cases\": \"smoke\" runs).\n"
		           "With OPERATOR: its summary, signature, its tensors (name, role, dtypes, ranks,\n"
		           "shape and strides of the first case) and scalars, ATen overloads (sub.Tensor,\n"
		           "sub.Scalar) with their case counts, and every case with its label.",
		.max_pos = 1,
		KGB_CLI_OPTS(opts),
	};
	char *pos[1];
	int npos = 0;
	unsigned mask = 0;

	int rc = kgb_cli_parse_args(&spec, argc, argv, g, pos, &npos, NULL, 0);
	if (rc >= 0)
		return rc;
	if (npos == 1) {
		const kgb_op_t *op = kgb_catalog_find(pos[0]);
		if (!op) {
			fprintf(stderr, "kgb ops: unknown operator '%s'\n", pos[0]);
			return KGB_CLI_EXIT_USAGE;
		}
		return show_op(op, json);
	}
	if (kgb_dataset_parse(dataset, &mask) < 0) {
		fprintf(stderr, "kgb ops: --dataset: unknown dataset '%s' (aten, mc, vllm, cublas, "
		                "nocublas, ms, demo, all)\n", dataset);
		return KGB_CLI_EXIT_USAGE;
	}

	static const char *const hdr[] = { "NAME", "SOURCE", "CATEGORY", "DTYPES", "CASES", "TIMED", "SMOKE" };
	kgb_cli_table_t *t = json ? NULL : kgb_cli_table_new(7, hdr, "llllrrr");
	json_t *arr = json ? json_array() : NULL;
	size_t n = 0;
	uint64_t cases = 0, timed = 0, smoke = 0;

	for (size_t i = 0; i < kgb_catalog_count(); i++) {
		const kgb_op_t *op = kgb_catalog_at(i);
		if (!(op->datasets & mask))
			continue;
		uint32_t nc = kgb_op_case_count(op), nt = kgb_op_timed_count(op), ns = kgb_op_smoke_case_count(op);
		n++;
		cases += nc;
		timed += nt;
		smoke += ns;
		if (json) {
			json_t *o = json_object();
			json_object_set_new(o, "name", json_string(op->name));
			json_object_set_new(o, "source", json_string(str_or(op->source, "")));
			json_object_set_new(o, "category", json_string(str_or(op->category, "")));
			json_object_set_new(o, "dtypes", json_string(str_or(op->dtypes, "")));
			json_object_set_new(o, "cases", json_integer(nc));
			json_object_set_new(o, "timed_cases", json_integer(nt));
			json_object_set_new(o, "smoke_cases", json_integer(ns));
			json_object_set_new(o, "summary", json_string(str_or(op->summary, "")));
			json_object_set_new(o, "signature", json_string(str_or(op->signature, "")));
			json_array_append_new(arr, o);
		} else {
			kgb_cli_table_cell(t, "%s", op->name);
			kgb_cli_table_cell(t, "%s", str_or(op->source, "-"));
			kgb_cli_table_cell(t, "%s", str_or(op->category, "-"));
			kgb_cli_table_cell(t, "%s", str_or(op->dtypes, "-"));
			kgb_cli_table_cell(t, "%u", nc);
			kgb_cli_table_cell(t, "%u", nt);
			kgb_cli_table_cell(t, "%u", ns);
		}
	}
	if (json) {
		json_t *root = json_object();
		json_object_set_new(root, "dataset", json_string(dataset));
		json_object_set_new(root, "catalog_version", json_string(kgb_catalog_version()));
		json_object_set_new(root, "operators", arr);
		kgb_cli_json_print(stdout, root);
	} else {
		if (n > 0)
			kgb_cli_table_print(t, stdout);
		printf("%zu operators (%llu cases, %llu timed, %llu smoke), dataset %s, catalog %s\n", n,
		       (unsigned long long)cases, (unsigned long long)timed, (unsigned long long)smoke, dataset,
		       kgb_catalog_version());
		kgb_cli_table_destroy(&t);
	}
	return KGB_CLI_OK;
}
