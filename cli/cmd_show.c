/* kgb show ID OPERATOR: every case of one operator in a campaign, with its parameters,
 * verdict, message, time, noise and speedup. */
#include <math.h>
#include <string.h>

#include "cli.h"
#include "client.h"
#include "output.h"
#include "results.h"
#include "util.h"

/* See results.h. */
int kgb_cli_show_request(kgb_cli_global_t *g, const char *cmd, uint64_t id, const char *op, const char *method,
                         const char *platform, bool failing, const char *baseline, Kgb__Envelope **reply)
{
	Kgb__ShowRequest req = KGB__SHOW_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	req.campaign_id = id;
	req.op = (char *)op;
	req.method = (char *)(method ? method : "");
	req.platform = (char *)(platform ? platform : "");
	req.failing_only = failing;
	req.baseline = (char *)(baseline ? baseline : "");
	env.body_case = KGB__ENVELOPE__BODY_SHOW;
	env.show = &req;
	return kgb_cli_request(g, cmd, &env, KGB__ENVELOPE__BODY_SHOW_REPLY, reply);
}

/* kgb show ID OPERATOR [--method M] [--platform P] [--failing] [--json] [--baseline METHOD]. */
int kgb_cli_cmd_show(int argc, char **argv, kgb_cli_global_t *g)
{
	const char *method = NULL, *platform = NULL, *baseline = NULL;
	bool failing = false, json = false;
	const kgb_cli_opt_t opts[] = {
		{ "method", 'm', KGB_CLI_OPT_STRING, &method, "M", "only this method" },
		{ "platform", 'p', KGB_CLI_OPT_STRING, &platform, "P", "only this platform" },
		{ "failing", 'f', KGB_CLI_OPT_FLAG, &failing, NULL, "only the cases that did not pass" },
		{ "json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "one JSON object per case, in an array" },
		{ "baseline", 0, KGB_CLI_OPT_STRING, &baseline, "METHOD",
		  "speedups against METHOD, or native (the stored native timings)" },
	};
	const kgb_cli_spec_t spec = {
		.name = "show",
		.usage = "ID OPERATOR [--method M] [--platform P] [--failing] [--json] [--baseline METHOD] | ID --failing",
		.summary = "Every case of one operator in a campaign: its parameters (shape, dtype,\n"
		           "layout, mode), the verdict and message, the median time with its relative\n"
		           "standard error, and the speedup against the baseline with its 2-sigma\n"
		           "interval (the spread within jobs and the platform's noise floor), as kgb\n"
		           "report prints it (\"tie\" when it includes 1). Messages are printed whole.\n"
		           "Without OPERATOR, --failing lists every operator's failing cases grouped by\n"
		           "message, as kgb failures ID.",
		KGB_CLI_OPTS(opts),
		.min_pos = 1,
		.max_pos = 2,
	};
	char *pos[2];
	int npos = 0;
	uint64_t id = 0;
	Kgb__Envelope *reply = NULL;

	int rc = kgb_cli_parse_args(&spec, argc, argv, g, pos, &npos, &id, 1);
	if (rc >= 0)
		return rc;
	if (npos == 1) {
		if (failing)
			return kgb_cli_failures(g, "show", id, method, platform, NULL, baseline, json);
		fprintf(stderr, "kgb show: an OPERATOR is needed, or --failing for every operator's failing cases\n"
		                "usage: kgb show %s\n",
		        spec.usage);
		return KGB_CLI_EXIT_USAGE;
	}
	rc = kgb_cli_show_request(g, "show", id, pos[1], method, platform, failing, baseline, &reply);
	if (rc != 0)
		return rc;
	const Kgb__ShowReply *sr = reply->show_reply;
	if (sr->n_rows == 0) {
		fprintf(stderr, "kgb show: campaign %llu, operator %s: %s\n", (unsigned long long)id, pos[1],
		        sr->error && *sr->error ? sr->error : "no results");
		kgb_wire_free(reply);
		return KGB_CLI_EXIT_REFUSED;
	}
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; i < sr->n_rows; i++) {
			const Kgb__CaseRow *r = sr->rows[i];
			json_t *o = json_pack("{s:s,s:s,s:i,s:s,s:s,s:s,s:b}", "method", r->method, "platform", r->platform,
			                      "case", (int)r->case_index, "label", r->label, "verdict", r->verdict, "message",
			                      r->message, "timed", r->timed);
			if (r->median_ns > 0) {
				json_object_set_new(o, "median_ns", json_real(r->median_ns));
				json_object_set_new(o, "rse", json_real(r->rse));
			}
			if (r->speedup > 0) {
				json_object_set_new(o, "speedup", json_real(r->speedup));
				kgb_cli_speedup_json(o, r->speedup, r->speedup_rse, r->noise_floor, r->tie);
			}
			json_array_append_new(a, o);
		}
		kgb_cli_json_print(stdout, a);
		kgb_wire_free(reply);
		return KGB_CLI_OK;
	}
	char sb[128];
	printf("%s\n", kgb_cli_seed_text(sr->seed, sr->seed_state, sb, sizeof sb));
	printf("speedups against %s, [2-sigma interval]; tie: the interval includes 1\n"
	       "  (the interval holds the spread within jobs and the platform's noise floor per case)\n",
	       sr->baseline && *sr->baseline ? sr->baseline : "native");
	kgb_cli_print_floors(stdout, "", sr->noise_floors, sr->n_noise_floors, NULL, 0);
	for (size_t k = 0; k < sr->n_rows; k++) {
		bool seen = false;
		for (size_t i = 0; i < sr->n_noise_floors && !seen; i++)
			seen = strcmp(sr->rows[k]->platform, sr->noise_floors[i]->platform) == 0;
		for (size_t j = 0; j < k && !seen; j++)
			seen = strcmp(sr->rows[k]->platform, sr->rows[j]->platform) == 0;
		if (!seen && sr->rows[k]->speedup > 0)
			printf("no noise floor measured on %s:\n  intervals hold the spread within jobs only "
			       "(scripts/aa-check.sh measures it)\n", sr->rows[k]->platform);
	}
	printf("\n");
	static const char *const hdr[] = {"method", "platform", "case", "parameters", "verdict", "time", "rse",
	                                  "speedup"};
	kgb_cli_table_t *t = kgb_cli_table_new(8, hdr, "ssrllrDA");
	size_t failing_rows = 0;
	for (size_t i = 0; i < sr->n_rows; i++) {
		const Kgb__CaseRow *r = sr->rows[i];
		char tb[32], sb[80];
		kgb_cli_table_cell(t, "%s", r->method);
		kgb_cli_table_cell(t, "%s", r->platform);
		kgb_cli_table_cell(t, "%u", r->case_index);
		kgb_cli_table_cell(t, "%s", r->label[0] ? r->label : "-");
		kgb_cli_table_cell(t, "%s", r->verdict);
		kgb_cli_table_cell(t, "%s", r->median_ns > 0 ? kgb_cli_fmt_ns(r->median_ns, tb, sizeof tb) : "-");
		if (r->median_ns > 0)
			kgb_cli_table_cell(t, "%.1f%%", 100.0 * r->rse);
		else
			kgb_cli_table_cell(t, "-");
		kgb_cli_table_cell(t, "%s", kgb_cli_fmt_speedup_ci(r->speedup, kgb_cli_sigma(r->speedup_rse, r->noise_floor),
		                                                   r->tie, sb, sizeof sb));
		failing_rows += strcmp(r->verdict, "pass") != 0;
	}
	kgb_cli_table_print(t, stdout);
	kgb_cli_table_destroy(&t);
	/* messages whole, below the table: they can be long (compile logs) */
	if (failing_rows) {
		printf("\n");
		for (size_t i = 0; i < sr->n_rows; i++) {
			const Kgb__CaseRow *r = sr->rows[i];
			if (strcmp(r->verdict, "pass") != 0 && r->message[0])
				printf("%s %s case %u [%s] %s: %s\n", r->method, r->platform, r->case_index, r->label, r->verdict,
				       r->message);
		}
	}
	kgb_wire_free(reply);
	return KGB_CLI_OK;
}
