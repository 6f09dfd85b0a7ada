/* kgb ops: the operators of the linked catalog (no coordinator needed). */
#include "catalog.h"
#include "cli.h"
#include "output.h"
#include "util.h"

static const char *str_or(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

/* kgb ops [--dataset NAME] [--json]. */
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
		.usage = "[--dataset NAME] [--json]",
		.summary = "List the operators of the catalog built into kgb: name, source, category,\n"
		           "dtypes, number of test cases and of performance-timed cases, and the size of\n"
		           "the smoke subset (the leading cases a manifest with \"cases\": \"smoke\" runs).",
		.opts = opts,
		.nopts = KGB_ARRAY_LEN(opts),
	};
	char *pos[1];
	int npos = 0;
	unsigned mask = 0;

	int rc = kgb_cli_parse_cmd(&spec, argc, argv, g, pos, &npos);
	if (rc != 0)
		return rc == KGB_CLI_HELP ? KGB_CLI_OK : KGB_CLI_EXIT_USAGE;
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
