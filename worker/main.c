/* kgb-worker: the worker daemon and its standalone tools.
 *
 *   kgb-worker [daemon] [--coordinator URL] [--name N] ...   serve a coordinator
 *   kgb-worker run JOBFILE [--backend B] [--device N] [--json|--text]
 *   kgb-worker devices
 *   kgb-worker exec ...                                       (internal: executor child)
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "backend.h"
#include "catalog.h"
#include "daemon.h"
#include "executor.h"
#include "jobfile.h"
#include "log.h"
#include "opts.h"
#include "util.h"
#include "validate.h"

#define DEFAULT_ENDPOINT "tcp://127.0.0.1:7710"

static const char usage_main[] =
	"usage: kgb-worker [COMMAND] [OPTIONS]\n"
	"\n"
	"The kgb worker: serves the devices of this machine to a kgb coordinator, or runs\n"
	"one job file standalone.\n"
	"\n"
	"commands:\n"
	"  daemon        connect to the coordinator and run the jobs it assigns (default)\n"
	"  run JOBFILE   run one job file on a device and print the results as JSON\n"
	"  devices       list the devices every backend found (and why a backend has none)\n"
	"  help [CMD]    show this help, or a command's\n"
	"\n"
	"`kgb-worker COMMAND --help` shows a command's options. `kgb-worker --version`.\n";

enum { D_COORDINATOR, D_ENDPOINT, D_NAME, D_BACKEND, D_PLATFORM, D_SLOTS, D_GRACE, D_PREWARM, D_PYTHON,
       D_LOGLEVEL, D_HELP, D_COUNT };

static const kgb_opt_t daemon_opts[D_COUNT] = {
	[D_COORDINATOR] = { "coordinator", 0, true, "URL",
	                    "coordinator's worker endpoint, or several comma-separated (an active coordinator and "
	                    "its standbys)", "KGB_WORKER_ENDPOINT", DEFAULT_ENDPOINT },
	[D_ENDPOINT] = { "endpoint", 0, true, "URL", "the same as --coordinator" },
	[D_NAME] = { "name", 0, true, "NAME", "worker name", "KGB_WORKER_NAME", "HOSTNAME-PID" },
	[D_BACKEND] = { "backend", 0, true, "NAME", "serve only this backend's devices", "KGB_WORKER_BACKEND" },
	[D_PLATFORM] = { "platform", 0, true, "NAME", "platform name for every device", "KGB_WORKER_PLATFORM" },
	[D_SLOTS] = { "slots", 0, true, "N|auto",
	              "jobs at once per device (auto: from the usable CPUs and the devices, docs/worker.md)",
	              "KGB_WORKER_SLOTS", "auto" },
	[D_GRACE] = { "grace-ms", 0, true, "MS",
	              "on SIGTERM, time running jobs get to finish before their leases are handed back",
	              "KGB_WORKER_GRACE_MS", "30000" },
	[D_PREWARM] = { "prewarm", 0, true, "WHEN",
	                "on|off|auto: keep an executor per free slot with its device context (and BLAS handle) "
	                "open before a job arrives; auto: on for GPU backends, off for opencl",
	                "KGB_WORKER_PREWARM", "auto" },
	[D_PYTHON] = { "python", 0, true, "PATH",
	               "the Python (with torch and Triton) that records Python candidates and compiles Triton "
	               "kernels", "KGB_WORKER_PYTHON", "python3 on PATH" },
	[D_LOGLEVEL] = { "log-level", 0, true, "LEVEL", "error|warn|info|debug", "KGB_LOG_LEVEL" },
	[D_HELP] = { "help", 'h', false, NULL, "show this help" },
};

/* A command's help: its text, then its options from their table. */
typedef struct cmd_help {
	const char *name; /* "kgb-worker run", in its messages */
	const char *text;
	const kgb_opt_t *opts;
	size_t nopts;
	int width;        /* of the options' left column */
} cmd_help_t;

static const cmd_help_t help_daemon = {
	"kgb-worker",
	"usage: kgb-worker [daemon] [OPTIONS]\n"
	"\n"
	"Connect to the coordinator, register this machine's devices and run the jobs it\n"
	"assigns, each in an executor child process. Stops on SIGTERM/SIGINT.\n"
	"\n"
	"options (environment variable in brackets):\n",
	daemon_opts, D_COUNT, 19,
};

enum { R_BACKEND, R_DEVICE, R_NO_TIMING, R_CASE, R_DUMP, R_JSON, R_TEXT, R_HELP, R_COUNT };

static const kgb_opt_t run_opts[R_COUNT] = {
	[R_BACKEND] = { "backend", 0, true, "B", "override the job file's backend (default opencl)" },
	[R_DEVICE] = { "device", 0, true, "N", "override the job file's device index within the backend" },
	[R_NO_TIMING] = { "no-timing", 0, false, NULL, "validate only, do not time" },
	[R_CASE] = { "case", 0, true, "N", "run only case N of the operator (whatever the job file's cases)" },
	[R_DUMP] = { "dump", 0, true, "DIR",
	             "write every case's inputs, reference and output to DIR/case-N/ (raw files and case.json "
	             "with dtype, shape, strides; docs/worker.md)" },
	[R_JSON] = { "json", 0, false, NULL, "the JSON document on one line" },
	[R_TEXT] = { "text", 0, false, NULL, "the results as a table" },
	[R_HELP] = { "help", 'h', false, NULL, "show this help" },
};

static const cmd_help_t help_run = {
	"kgb-worker run",
	"usage: kgb-worker run JOBFILE [--backend B] [--device N] [--case N] [--dump DIR]\n"
	"                      [--json | --text]\n"
	"\n"
	"Run one job file (docs/worker.md, \"Job files\") through an executor child on one\n"
	"device and print the results: by default a JSON document with one object per case\n"
	"(case, label, verdict, max_abs_err, max_rel_err, message, timing); --json prints it\n"
	"on one line, --text as a table. Exit status: 0 if every case passed, 1 if any did\n"
	"not, 2 for a bad command line or job file.\n"
	"\n",
	run_opts, R_COUNT, 13,
};

static const kgb_opt_t devices_opts[] = {
	{ "json", 0, false, NULL, "the devices as JSON" },
	{ "help", 'h', false, NULL, "show this help" },
};

static const cmd_help_t help_devices = {
	"kgb-worker devices",
	"usage: kgb-worker devices [--json]\n"
	"\n"
	"Probe every compiled-in backend and list its devices with their platform names,\n"
	"or the reason it has none.\n"
	"\n",
	devices_opts, KGB_ARRAY_LEN(devices_opts), 13,
};

static void usage(FILE *f, const cmd_help_t *h)
{
	fputs(h->text, f);
	kgb_opts_help(f, h->opts, h->nopts, h->width, 80);
}

/* What the command line of a worker command says besides its options: its help (0),
 * or a usage error (2) said on stderr as "kgb-worker CMD: ..." with the command's help. */
static int opts_end(kgb_opts_t *p, int k, const cmd_help_t *h)
{
	const char *cmd = h->name;
	char err[256];
	if (k >= 0) {
		usage(stdout, h);
		return 0;
	}
	if (k == KGB_OPTS_POSITIONAL)
		fprintf(stderr, "%s: unexpected argument '%s'\n", cmd, p->arg);
	else if (k == KGB_OPTS_UNKNOWN)
		fprintf(stderr, "%s: unknown option '%s'\n", cmd, p->arg);
	else if (k == KGB_OPTS_NO_VALUE)
		fprintf(stderr, "%s: missing value for '%s'\n", cmd, p->arg);
	else if (kgb_opts_error(p, k, err, sizeof err))
		fprintf(stderr, "%s: %s\n", cmd, err);
	usage(stderr, h);
	return 2;
}

/* ------------------------------------------------------------------ devices ---- */

static int cmd_devices(int argc, char **argv)
{
	bool as_json = false;
	kgb_opts_t p;
	int k, rc = -1;
	kgb_opts_init(&p, devices_opts, KGB_ARRAY_LEN(devices_opts), argc, argv);
	while (rc < 0 && (k = kgb_opts_next(&p)) != KGB_OPTS_END) {
		if (k == 0)
			as_json = true;
		else /* --help, or anything else: unknown */
			rc = opts_end(&p, k == 1 ? k : KGB_OPTS_UNKNOWN, &help_devices);
	}
	kgb_opts_free(&p);
	if (rc >= 0)
		return rc;
	size_t nb;
	const kgb_backend_t *const *bes = kgb_backends(&nb);
	json_t *arr = json_array();
	for (size_t b = 0; b < nb; b++) {
		kgb_device_info_t devs[64];
		char why[512] = "";
		int n = bes[b]->probe ? bes[b]->probe(devs, 64, why, sizeof why) : 0;
		if (!as_json)
			printf("%s: %d device(s)%s%s\n", bes[b]->name, n, n == 0 && why[0] ? ": " : "", n == 0 ? why : "");
		json_t *jb = json_pack("{s:s, s:i, s:[]}", "backend", bes[b]->name, "count", n, "devices");
		if (n == 0)
			json_object_set_new(jb, "why", json_string(why));
		for (int i = 0; i < n; i++) {
			char plat[192];
			kgb_worker_platform_name(devs[i].backend, devs[i].name, plat, sizeof plat);
			if (!as_json)
				printf("  [%d] %s\n      platform %s, arch %s, driver %s\n      memory %.1f GiB, "
				       "%u compute units, cache %.1f MiB%s%s\n",
				       i, devs[i].name, plat, devs[i].arch, devs[i].driver_version,
				       devs[i].memory_bytes / 1073741824.0, devs[i].compute_units,
				       devs[i].l2_bytes / 1048576.0, devs[i].caps & KGB_CAP_FP64 ? ", fp64" : "",
				       devs[i].caps & KGB_CAP_FP16 ? ", fp16" : "");
			json_array_append_new(json_object_get(jb, "devices"),
			                      json_pack("{s:i, s:s, s:s, s:s, s:s, s:I, s:I, s:i}", "index", i, "name",
			                                devs[i].name, "platform", plat, "arch", devs[i].arch, "driver",
			                                devs[i].driver_version, "memory_bytes",
			                                (json_int_t)devs[i].memory_bytes, "l2_bytes",
			                                (json_int_t)devs[i].l2_bytes, "compute_units",
			                                (int)devs[i].compute_units));
		}
		json_array_append_new(arr, jb);
	}
	if (as_json) {
		char *s = json_dumps(arr, JSON_INDENT(2));
		puts(s);
		free(s);
	}
	json_decref(arr);
	return 0;
}

/* --------------------------------------------------------------------- run ---- */

static json_t *case_json(const Kgb__CaseResult *cr, const kgb_op_t *op, uint64_t heldout_key)
{
	char label[200] = "";
	kgb_case_t c;
	char e[128];
	if (op && kgb_case_build_keyed(op, cr->case_index, heldout_key, &c, e, sizeof e) == 0) {
		snprintf(label, sizeof label, "%s", c.label);
		kgb_case_release(&c);
	}
	json_t *o = json_pack("{s:i, s:s, s:s, s:f, s:f, s:s, s:b}", "case", (int)cr->case_index, "label", label,
	                      "verdict", kgb_verdict_name(cr->verdict), "max_abs_err", cr->max_abs_err,
	                      "max_rel_err", cr->max_rel_err, "message", cr->message ? cr->message : "",
	                      "timed", cr->timed);
	if (cr->timing) {
		const Kgb__Timing *t = cr->timing;
		json_t *tj = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:f, s:s, s:b}", "median_ns", t->median_ns,
		                       "min_ns", t->min_ns, "p10_ns", t->p10_ns, "p90_ns", t->p90_ns, "mean_ns",
		                       t->mean_ns, "stdev_ns", t->stdev_ns, "samples", (int)t->samples, "rse", t->rse,
		                       "method", t->method ? t->method : "", "throttled", t->throttled);
		if (t->sm_clock_mhz > 0)
			json_object_set_new(tj, "sm_clock_mhz", json_real(t->sm_clock_mhz));
		if (t->temperature_c > 0)
			json_object_set_new(tj, "temperature_c", json_real(t->temperature_c));
		json_object_set_new(o, "timing", tj);
	} else {
		json_object_set_new(o, "timing", json_null());
	}
	return o;
}

static int cmd_run(int argc, char **argv)
{
	const char *path = NULL, *backend = NULL;
	long device = -1;
	int mode = 0; /* 0 pretty JSON, 1 compact JSON, 2 text */
	bool no_timing = false;
	long only_case = -1;
	const char *dump = NULL;
	kgb_opts_t p;
	int k, rc = -1;
	kgb_opts_init(&p, run_opts, R_COUNT, argc, argv);
	while (rc < 0 && (k = kgb_opts_next(&p)) != KGB_OPTS_END) {
		char *end;
		switch (k) {
		case R_BACKEND:
			backend = p.val;
			break;
		case R_DEVICE:
			device = strtol(p.val, &end, 10);
			if (*end || device < 0 || device > 1024) {
				fprintf(stderr, "kgb-worker run: --device: '%s' is not a device index\n", p.val);
				rc = 2;
			}
			break;
		case R_JSON:
			mode = 1;
			break;
		case R_TEXT:
			mode = 2;
			break;
		case R_NO_TIMING:
			no_timing = true;
			break;
		case R_CASE:
			errno = 0;
			only_case = strtol(p.val, &end, 10);
			if (errno || *end || !p.val[0] || only_case < 0 || only_case > (long)UINT32_MAX) {
				fprintf(stderr, "kgb-worker run: --case: '%s' is not a case index\n", p.val);
				rc = 2;
			}
			break;
		case R_DUMP:
			dump = p.val;
			break;
		case KGB_OPTS_POSITIONAL:
			if (!path) {
				path = p.val;
				break;
			}
			fprintf(stderr, "kgb-worker run: one job file only ('%s' and '%s')\n", path, p.val);
			rc = 2;
			break;
		default: /* --help, or a usage error */
			rc = opts_end(&p, k, &help_run);
		}
	}
	kgb_opts_free(&p);
	if (rc >= 0)
		return rc;
	if (!path) {
		fprintf(stderr, "kgb-worker run: no job file given\n");
		usage(stderr, &help_run);
		return 2;
	}
	kgb_jobfile_t jf;
	char err[1024];
	if (kgb_jobfile_load(path, &jf, err, sizeof err) != 0) {
		fprintf(stderr, "kgb-worker run: %s\n", err);
		return 2;
	}
	if (backend)
		snprintf(jf.backend, sizeof jf.backend, "%s", backend);
	if (device >= 0)
		jf.device = (uint32_t)device;
	if (no_timing)
		jf.job->timing = false;
	rc = 2;
	if (only_case >= 0) {
		const kgb_op_t *cop = kgb_catalog_find(jf.job->op);
		uint32_t nc = cop ? kgb_op_case_count(cop) : 0;
		if ((uint32_t)only_case >= nc) {
			fprintf(stderr, "kgb-worker run: --case: %ld is out of range (%s has %u cases, 0..%u)\n", only_case,
			        jf.job->op, nc, nc ? nc - 1 : 0);
			kgb_jobfile_release(&jf);
			return 2;
		}
		jf.job->cases[0] = (uint32_t)only_case; /* the job file allocates at least one */
		jf.job->n_cases = 1;
	}
	if (dump) {
		char *abs = NULL;
		if (mkdir(dump, 0755) != 0 && errno != EEXIST) {
			fprintf(stderr, "kgb-worker run: --dump: cannot create '%s': %s\n", dump, strerror(errno));
			kgb_jobfile_release(&jf);
			return 2;
		}
		if (!(abs = realpath(dump, NULL))) {
			fprintf(stderr, "kgb-worker run: --dump: '%s': %s\n", dump, strerror(errno));
			kgb_jobfile_release(&jf);
			return 2;
		}
		setenv("KGB_EXEC_DUMP_DIR", abs, 1); /* read by the executor child (dump.h) */
		free(abs);
	}
	json_t *out = NULL;
	Kgb__JobResult *r = NULL;

	const kgb_backend_t *be = kgb_backend_find(jf.backend);
	if (!be) {
		fprintf(stderr, "kgb-worker run: %s: backend: no backend named '%s' in this build\n", path, jf.backend);
		goto out;
	}
	kgb_device_info_t devs[64];
	char why[512] = "";
	int n = be->probe(devs, 64, why, sizeof why);
	if ((int)jf.device >= n) {
		fprintf(stderr, "kgb-worker run: %s: device: %s has %d device(s)%s%s, no device %u\n", path, be->name, n,
		        why[0] ? ": " : "", why, jf.device);
		goto out;
	}
	bool needs_health = false;
	r = kgb_exec_job_sync(NULL, be->name, jf.device, jf.job, &needs_health, err, sizeof err);
	if (!r) {
		fprintf(stderr, "kgb-worker run: %s\n", err);
		goto out;
	}
	const kgb_op_t *op = kgb_catalog_find(jf.job->op);
	char plat[192];
	kgb_worker_platform_name(be->name, devs[jf.device].name, plat, sizeof plat);
	size_t passed = 0;
	json_t *cases = json_array();
	for (size_t i = 0; i < r->n_cases; i++) {
		if (r->cases[i]->verdict == KGB__VERDICT__VERDICT_PASS)
			passed++;
		json_array_append_new(cases, case_json(r->cases[i], op, jf.job->heldout_key));
	}
	out = json_pack("{s:s, s:s, s:i, s:s, s:s, s:I, s:i, s:i, s:f, s:f, s:f, s:o, s:s}", "op", jf.job->op,
	                "backend", be->name, "device", (int)jf.device, "device_name", devs[jf.device].name,
	                "platform", plat, "seed", (json_int_t)jf.job->seed, "passed", (int)passed, "total",
	                (int)r->n_cases, "compile_ms", r->compile_ms, "device_ms", r->device_ms, "wall_ms",
	                r->wall_ms, "cases", cases, "log", r->log ? r->log : "");
	if (r->infra == KGB__VERDICT__VERDICT_INFRA_ERROR)
		json_object_set_new(out, "infra_error", json_true());
	if (needs_health)
		json_object_set_new(out, "device_needs_health_check", json_true());
	if (mode == 2) {
		printf("%s on %s (device %u), seed %llu: %zu/%zu passed\n", jf.job->op, plat, jf.device,
		       (unsigned long long)jf.job->seed, passed, r->n_cases);
		for (size_t i = 0; i < json_array_size(cases); i++) {
			json_t *c = json_array_get(cases, i);
			json_t *t = json_object_get(c, "timing");
			printf("  %4d %-20s %-40s", (int)json_integer_value(json_object_get(c, "case")),
			       json_string_value(json_object_get(c, "verdict")),
			       json_string_value(json_object_get(c, "label")));
			if (json_is_object(t))
				printf(" median %.0f ns (%d samples, rse %.2f%%)",
				       json_real_value(json_object_get(t, "median_ns")),
				       (int)json_integer_value(json_object_get(t, "samples")),
				       100 * json_real_value(json_object_get(t, "rse")));
			const char *m = json_string_value(json_object_get(c, "message"));
			if (m && *m && strcmp(json_string_value(json_object_get(c, "verdict")), "pass") != 0)
				printf("\n       %s", m);
			printf("\n");
		}
		if (r->infra == KGB__VERDICT__VERDICT_INFRA_ERROR)
			printf("infra error: %s\n", r->log ? r->log : "");
	} else {
		char *s = json_dumps(out, mode == 1 ? JSON_COMPACT : JSON_INDENT(2));
		puts(s);
		free(s);
	}
	rc = (passed == r->n_cases && r->n_cases > 0 && r->infra != KGB__VERDICT__VERDICT_INFRA_ERROR) ? 0 : 1;
out:
	json_decref(out);
	if (r)
		kgb__job_result__free_unpacked(r, NULL);
	kgb_jobfile_release(&jf);
	return rc;
}

/* ------------------------------------------------------------------ daemon ---- */

static int parse_u32(const char *opt, const char *s, uint32_t lo, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || !*s || v < lo || v > UINT32_MAX) {
		fprintf(stderr, "kgb-worker: %s: '%s' is not a number >= %u\n", opt, s, lo);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* A slot count, or "auto" (0: sized from the machine) */
static int parse_slots(const char *opt, const char *s, uint32_t *out)
{
	if (strcmp(s, "auto") == 0) {
		*out = 0;
		return 0;
	}
	return parse_u32(opt, s, 1, out);
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v && *v ? v : dflt;
}

static int cmd_daemon(int argc, char **argv, int first)
{
	/* dumping buffers is for kgb-worker run only: never for the jobs of a daemon */
	unsetenv("KGB_EXEC_DUMP_DIR");
	kgb_worker_opts_t o = {
		.endpoint = env_or("KGB_WORKER_ENDPOINT", DEFAULT_ENDPOINT),
		.name = env_or("KGB_WORKER_NAME", NULL),
		.platform = env_or("KGB_WORKER_PLATFORM", NULL),
		.backend = env_or("KGB_WORKER_BACKEND", NULL),
		.slots = 0,   /* from the machine's CPUs and devices (worker/sizing.h) */
		.grace_ms = 30000,
		.health_timeout_ms = 30000,
	};
	const char *level = NULL;
	const char *prewarm = env_or("KGB_WORKER_PREWARM", "auto");
	const char *python = env_or("KGB_WORKER_PYTHON", NULL);
	if (getenv("KGB_WORKER_SLOTS") && parse_slots("KGB_WORKER_SLOTS", getenv("KGB_WORKER_SLOTS"), &o.slots))
		return 2;
	if (getenv("KGB_WORKER_GRACE_MS") &&
	    parse_u32("KGB_WORKER_GRACE_MS", getenv("KGB_WORKER_GRACE_MS"), 0, &o.grace_ms))
		return 2;
	kgb_opts_t p;
	int k, rc = -1;
	kgb_opts_init(&p, daemon_opts, D_COUNT, argc - first + 1, argv + first - 1);
	while (rc < 0 && (k = kgb_opts_next(&p)) != KGB_OPTS_END) {
		switch (k) {
		case D_COORDINATOR:
		case D_ENDPOINT:
			o.endpoint = p.val;
			break;
		case D_NAME:
			o.name = p.val;
			break;
		case D_PLATFORM:
			o.platform = p.val;
			break;
		case D_BACKEND:
			o.backend = p.val;
			break;
		case D_LOGLEVEL:
			level = p.val;
			break;
		case D_SLOTS:
			if (parse_slots(p.arg, p.val, &o.slots))
				rc = 2;
			break;
		case D_GRACE:
			if (parse_u32(p.arg, p.val, 0, &o.grace_ms))
				rc = 2;
			break;
		case D_PREWARM:
			prewarm = p.val;
			break;
		case D_PYTHON:
			python = p.val;
			break;
		default: /* --help, or a usage error */
			rc = opts_end(&p, k, &help_daemon);
		}
	}
	kgb_opts_free(&p);
	if (rc >= 0)
		return rc;
	if (strcmp(prewarm, "on") == 0)
		o.prewarm = KGB_PREWARM_ON;
	else if (strcmp(prewarm, "off") == 0)
		o.prewarm = KGB_PREWARM_OFF;
	else if (strcmp(prewarm, "auto") == 0)
		o.prewarm = KGB_PREWARM_AUTO;
	else {
		fprintf(stderr, "kgb-worker: --prewarm (or KGB_WORKER_PREWARM): '%s' is not one of on, off, auto\n", prewarm);
		return 2;
	}
	if (o.backend && !kgb_backend_find(o.backend)) {
		fprintf(stderr, "kgb-worker: --backend: no backend named '%s' in this build\n", o.backend);
		return 2;
	}
	if (python) {
		char *abs = kgb_find_program(python);
		if (!abs) {
			fprintf(stderr, "kgb-worker: --python (or KGB_WORKER_PYTHON): '%s' is not an executable file\n",
			        python);
			return 2;
		}
		/* the executors find it where they look for the recorder's, the Triton
		 * helper's and the native provider's Python */
		setenv("KGB_PYREC_PYTHON", abs, 1);
		setenv("KGB_TRITON_PYTHON", abs, 1);
		setenv("KGB_PYTHON", abs, 1);
		free(abs);
	}
	kgb_log_init("worker", level);
	char *ep = kgb_endpoint_for_connect(o.endpoint); /* "host:port" means tcp:// */
	o.endpoint = ep;
	rc = kgb_worker_daemon(&o);
	free(ep);
	return rc;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	if (cmd && strcmp(cmd, "exec") == 0)
		return kgb_executor_main(argc - 1, argv + 1);
	kgb_log_init("worker", NULL);
	if (!cmd || cmd[0] == '-') {
		if (cmd && strcmp(cmd, "--version") == 0) {
			printf("kgb-worker %s (catalog %s)\n", KGB_VERSION, kgb_catalog_version());
			return 0;
		}
		if (cmd && (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)) {
			fputs(usage_main, stdout);
			fputs("\n", stdout);
			usage(stdout, &help_daemon);
			return 0;
		}
		return cmd_daemon(argc, argv, 1);
	}
	if (strcmp(cmd, "daemon") == 0)
		return cmd_daemon(argc, argv, 2);
	if (strcmp(cmd, "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(cmd, "devices") == 0)
		return cmd_devices(argc - 1, argv + 1);
	if (strcmp(cmd, "help") == 0) {
		const char *sub = argc > 2 ? argv[2] : "";
		const cmd_help_t *h = strcmp(sub, "run") == 0 ? &help_run : strcmp(sub, "devices") == 0 ? &help_devices :
		                      strcmp(sub, "daemon") == 0 ? &help_daemon : NULL;
		if (h)
			usage(stdout, h);
		else
			fputs(usage_main, stdout);
		return 0;
	}
	fprintf(stderr, "kgb-worker: unknown command '%s'\n%s", cmd, usage_main);
	return 2;
}
