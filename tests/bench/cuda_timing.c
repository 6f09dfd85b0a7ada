/* kgb-cuda-bench: times one Triton kernel through the CUDA backend with the executor's
 * timing rule (worker/executor.c, time_case): a few warm-up runs, then samples until
 * kgb_sampler_done (at least 10, relative standard error under 0.5% or the budget
 * spent), the L2 flushed before every sample and one event pair around each launch.
 * Used by scripts/bench-timing.py to compare kgb's median with triton.testing.do_bench
 * on the same compiled kernel. Built by scripts/bundle.sh (not part of `make`).
 *
 *   kgb-cuda-bench SPEC.json
 *
 * SPEC: {"source": "k.py", "entry": "k", "signature": "*fp32,i32",
 *        "constants": {"BLOCK": 1024}, "num_warps": 4, "num_stages": 3,
 *        "grid": [g0, g1, g2],
 *        "buffers": [{"bytes": N, "dtype": "f32"}],       random values in [-1, 1)
 *        "args": [{"buf": 0}, {"i32": 5}, {"f32": 0.5}],
 *        "repeats": 3, "budget_ms": 500, "min_samples": 10}
 * Prints one JSON object: the medians (ns) of each repeat and the last repeat's stats. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "dtype.h"
#include "log.h"
#include "stats.h"
#include "util.h"

static int die(const char *msg, const char *detail)
{
	fprintf(stderr, "kgb-cuda-bench: %s%s%s\n", msg, detail ? ": " : "", detail ? detail : "");
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return die("usage: kgb-cuda-bench SPEC.json", NULL);
	kgb_log_init("bench", NULL);
	const kgb_backend_t *be = &kgb_backend_cuda;
	char err[2048];
	size_t len;
	char *text = kgb_read_file(argv[1], &len, err, sizeof err);
	if (!text)
		return die(err, NULL);
	json_error_t je;
	json_t *spec = json_loadb(text, len, 0, &je);
	if (!spec)
		return die(argv[1], je.text);
	const char *srcpath = json_string_value(json_object_get(spec, "source"));
	if (!srcpath)
		return die(argv[1], "source missing");
	size_t srclen;
	char *src = kgb_read_file(srcpath, &srclen, err, sizeof err);
	if (!src)
		return die(err, NULL);

	void *ctx;
	if (be->open(0, &ctx, err, sizeof err) != 0)
		return die("open", err);

	/* the plan's configuration for the kernel */
	kgb_plan_config_t cfg = { 0 };
	json_t *consts = json_object_get(spec, "constants");
	cfg.nconstants = json_object_size(consts);
	cfg.constants = kgb_xcalloc(cfg.nconstants + 1, sizeof *cfg.constants);
	const char *key;
	json_t *val;
	size_t ci = 0;
	json_object_foreach(consts, key, val)
	{
		cfg.constants[ci].name = kgb_xstrdup(key);
		cfg.constants[ci].value = json_is_integer(val) ? kgb_xasprintf("%lld", (long long)json_integer_value(val))
		                                               : kgb_xstrdup(json_string_value(val));
		ci++;
	}
	cfg.num_warps = (int)json_integer_value(json_object_get(spec, "num_warps"));
	cfg.num_stages = (int)json_integer_value(json_object_get(spec, "num_stages"));
	cfg.num_ctas = 1;
	kgb_compile_req_t req = {
		.lang = KGB_LANG_TRITON,
		.entry = json_string_value(json_object_get(spec, "entry")),
		.source = src,
		.source_len = srclen,
		.name = srcpath,
		.config = &cfg,
		.signature = json_string_value(json_object_get(spec, "signature")),
	};
	kgb_module_t *mod;
	char *log = kgb_xcalloc(1, 65536);
	if (be->compile(ctx, &req, &mod, log, 65536) != 0)
		return die("compile", be->last_error(ctx));

	json_t *bufs = json_object_get(spec, "buffers");
	size_t nb = json_array_size(bufs);
	kgb_dbuf_t **db = kgb_xcalloc(nb + 1, sizeof *db);
	kgb_rng_t rng;
	kgb_rng_seed(&rng, 1234);
	for (size_t i = 0; i < nb; i++) {
		json_t *b = json_array_get(bufs, i);
		size_t bytes = (size_t)json_integer_value(json_object_get(b, "bytes"));
		kgb_dtype_t dt = KGB_DT_F32;
		const char *dts = json_string_value(json_object_get(b, "dtype"));
		if (dts && kgb_dtype_parse(dts, &dt) != 0)
			return die("bad dtype", dts);
		if (be->alloc(ctx, bytes, &db[i]) != 0)
			return die("alloc", be->last_error(ctx));
		size_t es = kgb_dtype_size(dt), n = bytes / es;
		uint8_t *host = kgb_xmalloc(bytes);
		for (size_t j = 0; j < n; j++)
			kgb_dtype_store(dt, host, j, 2.0 * kgb_rng_uniform(&rng) - 1.0);
		if (be->write(ctx, db[i], 0, host, bytes) != 0)
			return die("write", be->last_error(ctx));
		free(host);
	}
	json_t *args = json_object_get(spec, "args");
	size_t na = json_array_size(args);
	kgb_larg_t *la = kgb_xcalloc(na + 1, sizeof *la);
	for (size_t i = 0; i < na; i++) {
		json_t *a = json_array_get(args, i);
		json_t *v;
		if ((v = json_object_get(a, "buf"))) {
			la[i].kind = KGB_LARG_BUF;
			la[i].buf = db[json_integer_value(v)];
		} else if ((v = json_object_get(a, "i32"))) {
			int32_t x = (int32_t)json_integer_value(v);
			la[i].kind = KGB_LARG_SCALAR;
			la[i].size = 4;
			memcpy(la[i].bytes, &x, 4);
		} else if ((v = json_object_get(a, "i64"))) {
			int64_t x = (int64_t)json_integer_value(v);
			la[i].kind = KGB_LARG_SCALAR;
			la[i].size = 8;
			memcpy(la[i].bytes, &x, 8);
		} else if ((v = json_object_get(a, "f32"))) {
			float x = (float)json_number_value(v);
			la[i].kind = KGB_LARG_SCALAR;
			la[i].size = 4;
			memcpy(la[i].bytes, &x, 4);
		} else {
			return die("bad arg", json_dumps(a, JSON_COMPACT));
		}
	}
	kgb_launch_t L = { .mod = mod, .args = la, .nargs = na };
	json_t *grid = json_object_get(spec, "grid");
	for (int d = 0; d < 3; d++)
		L.grid[d] = d < (int)json_array_size(grid) ? (uint64_t)json_integer_value(json_array_get(grid, (size_t)d)) : 1;
	int repeats = (int)json_integer_value(json_object_get(spec, "repeats"));
	if (repeats < 1)
		repeats = 3;
	/* the executor's rule by default; "min_samples" raises the floor for experiments */
	json_int_t min_samples = json_integer_value(json_object_get(spec, "min_samples"));
	if (min_samples < 10)
		min_samples = 10;
	double budget_ms = json_number_value(json_object_get(spec, "budget_ms"));
	if (budget_ms <= 0)
		budget_ms = 500;

	json_t *out = json_object();
	json_t *meds = json_array();
	kgb_stats_t st = { 0 };
	int throttled = 0;
	double clock_mhz = 0;
	for (int r = 0; r < repeats; r++) {
		double budget_ns = budget_ms * 1e6;
		kgb_sampler_t s;
		kgb_sampler_init(&s, (size_t)min_samples, 100000, 0.005, budget_ns);
		kgb_sampler_set_min_time(&s, 0.2 * budget_ns); /* as the executor does */
		uint64_t t0 = kgb_now_ns();
		for (int w = 0; w < 3; w++) {
			if (w > 0 && (double)(kgb_now_ns() - t0) > 0.1 * budget_ns)
				break;
			if (be->run(ctx, &L, 1, 60000, NULL) != 0)
				return die("warm-up run", be->last_error(ctx));
		}
		uint64_t last = kgb_now_ns();
		while (!kgb_sampler_done(&s)) {
			double el = 0;
			if (be->flush_cache(ctx) != 0)
				return die("flush", be->last_error(ctx));
			if (be->run(ctx, &L, 1, 60000, &el) != 0)
				return die("run", be->last_error(ctx));
			kgb_clock_info_t ci2;
			if (be->clocks && be->clocks(ctx, &ci2) == 0) {
				throttled += ci2.throttled;
				clock_mhz = ci2.sm_clock_mhz;
			}
			uint64_t now = kgb_now_ns();
			kgb_sampler_add(&s, el, (double)(now - last));
			last = now;
		}
		kgb_stats_compute(s.v, s.n, &st);
		json_array_append_new(meds, json_real(st.median));
		kgb_sampler_release(&s);
	}
	json_object_set_new(out, "medians_ns", meds);
	json_object_set_new(out, "min_ns", json_real(st.min));
	json_object_set_new(out, "p10_ns", json_real(st.p10));
	json_object_set_new(out, "p90_ns", json_real(st.p90));
	json_object_set_new(out, "mean_ns", json_real(st.mean));
	json_object_set_new(out, "stdev_ns", json_real(st.stdev));
	json_object_set_new(out, "rse", json_real(st.rse));
	json_object_set_new(out, "samples", json_integer((json_int_t)st.n));
	json_object_set_new(out, "throttled_samples", json_integer(throttled));
	json_object_set_new(out, "sm_clock_mhz", json_real(clock_mhz));
	char *o = json_dumps(out, JSON_COMPACT);
	puts(o);
	free(o);
	json_decref(out);
	for (size_t i = 0; i < nb; i++)
		be->free(ctx, db[i]);
	be->module_free(ctx, mod);
	be->close(ctx);
	return 0;
}
