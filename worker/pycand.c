/* Python + Triton candidates: the recorder's request, its sandboxed run, and the
 * recording turned into a checked launch plan (see pycand.h). */
#include "pycand.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "backends/backend_common.h"
#include "compile.h"
#include "dtype.h"
#include "expr.h"
#include "sizing.h"
#include "util.h"
#include "validate.h"

static json_t *tensor_json(const kgb_tensor_t *t)
{
	json_t *o = json_object(), *shape = json_array(), *stride = json_array();
	for (int d = 0; d < t->ndim; d++) {
		json_array_append_new(shape, json_integer(t->shape[d]));
		json_array_append_new(stride, json_integer(t->stride[d]));
	}
	json_object_set_new(o, "shape", shape);
	json_object_set_new(o, "stride", stride);
	json_object_set_new(o, "dtype", json_string(kgb_dtype_name(t->dtype)));
	json_object_set_new(o, "offset", json_integer(0));
	return o;
}

/* The case as the PyTorch provider's mapping reads a kgb.Case (python/kgb): the
 * operator, the grid's parameters (strings, null when unset), the scalars (values as
 * doubles, with their dtypes), the symbols and every tensor with its role. */
static json_t *case_json(const kgb_case_t *c)
{
	static const char *const roles[] = { [KGB_ROLE_IN] = "in", [KGB_ROLE_OUT] = "out", [KGB_ROLE_INOUT] = "inout" };
	json_t *o = json_object(), *params = json_object(), *scalars = json_array(), *syms = json_object(),
	       *tensors = json_array();
	json_object_set_new(o, "op", json_string(c->op->name));
	const kgb_grid_spec_t *g = &c->op->grids[c->grid];
	for (int i = 0; i < KGB_MAX_PARAMS && g->params[i].name; i++)
		json_object_set_new(params, g->params[i].name, c->pv[i] ? json_string(c->pv[i]->s) : json_null());
	for (int i = 0; i < c->nscalars; i++) {
		json_t *s = json_object();
		json_object_set_new(s, "name", json_string(c->s[i].name));
		json_object_set_new(s, "dtype", json_string(kgb_dtype_name(c->s[i].dtype)));
		json_object_set_new(s, "value", json_real(c->s[i].value));
		json_array_append_new(scalars, s);
	}
	size_t nsym = c->sym ? kgb_symtab_count(c->sym) : 0;
	for (size_t i = 0; i < nsym; i++) {
		const char *n = NULL, *sv = NULL;
		kgb_value_t v = { 0 };
		if (!kgb_symtab_at(c->sym, i, &n, &v, &sv) || !n)
			continue;
		json_object_set_new(syms, n, sv ? json_string(sv) : v.is_float ? json_real(v.f) : json_integer(v.i));
	}
	for (int i = 0; i < c->ntensors; i++) {
		json_t *t = tensor_json(&c->t[i]);
		json_object_set_new(t, "name", json_string(c->t[i].name));
		json_object_set_new(t, "role", json_string(roles[c->t[i].role]));
		json_array_append_new(tensors, t);
	}
	json_object_set_new(o, "params", params);
	json_object_set_new(o, "scalars", scalars);
	json_object_set_new(o, "symbols", syms);
	json_object_set_new(o, "tensors", tensors);
	return o;
}

char *kgb_pycand_request(const kgb_case_t *c, const char *source, size_t len, const char *source_name,
                         const char *function, bool allow_sync, int compile_arch)
{
	json_t *r = json_object(), *args = json_array(), *outs = json_array();
	json_object_set_new(r, "source", json_stringn(source, len));
	json_object_set_new(r, "source_name", json_string(source_name ? source_name : "candidate.py"));
	json_object_set_new(r, "function", function ? json_string(function) : json_null());
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *t = &c->t[i];
		if (t->role == KGB_ROLE_IN || t->role == KGB_ROLE_INOUT) {
			json_t *a = json_object();
			json_object_set_new(a, "name", json_string(t->name));
			json_object_set_new(a, "tensor", tensor_json(t));
			json_array_append_new(args, a);
		}
		if (t->role == KGB_ROLE_OUT || t->role == KGB_ROLE_INOUT) {
			json_t *o = tensor_json(t);
			json_object_set_new(o, "name", json_string(t->name));
			json_array_append_new(outs, o);
		}
	}
	for (int i = 0; i < c->nscalars; i++) {
		const kgb_scalar_t *s = &c->s[i];
		json_t *a = json_object();
		json_object_set_new(a, "name", json_string(s->name));
		bool integral = kgb_dtype_name(s->dtype)[0] == 'i' || kgb_dtype_name(s->dtype)[0] == 'u';
		json_object_set_new(a, "value", integral ? json_integer((json_int_t)s->value) : json_real(s->value));
		json_object_set_new(a, "keyword", json_true());
		json_array_append_new(args, a);
	}
	/* an ATen operator's wrapper is called as torch calls the overload: the recorder
	 * makes that call from the case with the PyTorch provider's mapping */
	if (strcmp(c->op->source, "aten") == 0)
		json_object_set_new(r, "case", case_json(c));
	json_object_set_new(r, "args", args);
	json_object_set_new(r, "outputs", outs);
	json_object_set_new(r, "allow_sync", json_boolean(allow_sync));
	if (compile_arch > 0) {
		json_t *tgt = json_object();
		json_object_set_new(tgt, "backend", json_string("cuda"));
		json_object_set_new(tgt, "arch", json_integer(compile_arch));
		json_object_set_new(tgt, "warp_size", json_integer(32));
		json_object_set_new(r, "compile", tgt);
	} else {
		json_object_set_new(r, "compile", json_null());
	}
	char *text = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
	KGB_ASSERT(text != NULL);
	json_decref(r);
	return text;
}

char *kgb_pycand_find_recorder(void)
{
	static const char *const rel[] = { "pyrec/kgb_record.py", "../libexec/kgb/pyrec/kgb_record.py",
		                               "../../../worker/pyrec/kgb_record.py",
		                               "../../worker/pyrec/kgb_record.py" };
	return kgb_find_near_exe("KGB_PYREC", rel, KGB_ARRAY_LEN(rel));
}

char *kgb_pycand_steps_source(const char *recorder, size_t *len, char *err, size_t errlen)
{
	const char *slash = strrchr(recorder, '/');
	char *path = kgb_xasprintf("%.*s%s", slash ? (int)(slash - recorder + 1) : 0, recorder, KGB_PYCAND_STEPS);
	char *text = kgb_read_file(path, len, err, errlen);
	free(path);
	return text;
}

/* The child's environment: only what Python needs to find its packages, and the
 * device the executor was given, which is the one the recording runs on. */
static char **recorder_env(const char *python)
{
	static const char *const vis[] = { "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES" };
	static const char *const extra[] = { "TRITON_CACHE_DIR=.triton-cache" };
	return kgb_python_env(python, getenv("KGB_TRITON_PYTHONPATH"), vis, KGB_ARRAY_LEN(vis), extra,
	                      KGB_ARRAY_LEN(extra));
}

/* The binary and ABI the recorder kept as <stem>.jit.cubin and <stem>.jit.abi.json, both
 * or neither. */
static void read_prebuilt(const kgb_sandbox_result_t *sr, const char *stem, char **bin, size_t *binlen, char **abi,
                          size_t *abilen)
{
	char name[96];
	snprintf(name, sizeof name, "%s.jit.cubin", stem);
	*bin = kgb_sandbox_read(sr, name, binlen);
	snprintf(name, sizeof name, "%s.jit.abi.json", stem);
	*abi = *bin ? kgb_sandbox_read(sr, name, abilen) : NULL;
	if (!*abi) {
		free(*bin);
		*bin = NULL;
		*binlen = 0;
	}
}

/* Fill out from the recording left under prefix ("" or "3/") in the child's directory.
 * Returns 0, or -1 with err when there is no readable recording (not the candidate's
 * fault). */
static int read_recording(const kgb_sandbox_result_t *sr, const char *prefix, const kgb_case_t *c,
                          kgb_pycand_out_t *out, char *err, size_t errlen)
{
	char name[64];
	size_t len = 0;
	snprintf(name, sizeof name, "%srecording.json", prefix);
	out->recording = kgb_sandbox_read(sr, name, &len);
	if (!out->recording)
		return kgb_err(err, errlen, "the recorder wrote no %s", name);
	json_error_t je;
	json_t *r = json_loadb(out->recording, len, 0, &je);
	const char *verdict = r ? json_string_value(json_object_get(r, "verdict")) : NULL;
	int v = verdict ? kgb_verdict_parse(verdict) : -1;
	if (v < 0) {
		kgb_err(err, errlen, "%s: verdict: '%s' is not a verdict", name, verdict ? verdict : "(none)");
		json_decref(r);
		return -1;
	}
	out->verdict = v;
	static const char *const secs[KGB_PYREC_NSEC] = { "lock", "context", "import", "inputs",
	                                                   "call", "keep", "compile", "total" };
	json_t *sec = json_object_get(r, "seconds");
	for (size_t k = 0; k < KGB_PYREC_NSEC; k++)
		out->sec[k] = json_number_value(json_object_get(sec, secs[k]));
	const char *msg = json_string_value(json_object_get(r, "message"));
	kgb_strlcpy(out->message, msg ? msg : "", sizeof out->message);
	json_t *steps = json_object_get(r, "steps"), *st;
	size_t si;
	json_array_foreach(steps, si, st) {
		char *prev = out->steps;
		out->steps = kgb_xasprintf("%s%s%s", prev ? prev : "", prev ? "; " : "",
		                           json_is_string(st) ? json_string_value(st) : "?");
		free(prev);
	}
	json_decref(r);
	if (v == KGB_V_PASS) {
		snprintf(name, sizeof name, "%splan.json", prefix);
		out->plan_json = kgb_sandbox_read(sr, name, &len);
		char pe[512];
		if (!out->plan_json) {
			out->verdict = KGB_V_PLAN_ERROR;
			snprintf(out->message, sizeof out->message, "the recorder passed but wrote no plan.json");
		} else if (kgb_plan_parse(out->plan_json, len, "recorded plan", &out->plan, pe, sizeof pe) != 0 ||
		           kgb_plan_check(out->plan, c->op, "recorded plan", pe, sizeof pe) != 0) {
			kgb_plan_destroy(&out->plan);
			out->verdict = KGB_V_PLAN_ERROR;
			snprintf(out->message, sizeof out->message, "%s", pe);
		} else {
			/* kernel i is launch i: the binary Triton made for it in the recording, where
			 * the recorder kept one (kgb_record.py, keep_binaries) */
			for (size_t i = 0; i < out->plan->nkernels; i++) {
				kgb_plan_kernel_t *k = &out->plan->kernels[i];
				snprintf(name, sizeof name, "%sk%zu", prefix, i);
				read_prebuilt(sr, name, &k->prebuilt, &k->prebuilt_len, &k->prebuilt_abi, &k->prebuilt_abi_len);
				/* an autotuned launch: configuration j's as k<i>.c<j> */
				for (size_t j = 0; j < k->nconfigs; j++) {
					kgb_plan_config_t *cf = &k->configs[j];
					snprintf(name, sizeof name, "%sk%zu.c%zu", prefix, i, j);
					read_prebuilt(sr, name, &cf->prebuilt, &cf->prebuilt_len, &cf->prebuilt_abi,
					              &cf->prebuilt_abi_len);
				}
			}
		}
	}
	return 0;
}

/* The tail of the child's output, for an error message. */
static const char *output_tail(const kgb_sandbox_result_t *sr)
{
	const char *o = sr->output ? sr->output : "";
	size_t ol = strlen(o);
	return ol > 300 ? o + ol - 300 : o;
}

int kgb_pycand_record(const char *python, const char *recorder, const char *request, const kgb_case_t *c,
                      kgb_pycand_out_t *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	char **env = recorder_env(python);
	const char *argv[] = { python, "-s", recorder, "-", ".", NULL };
	kgb_sandbox_opts_t so = {
		.wall_ms = kgb_be_env_u32("KGB_PYREC_WALL_MS", 180000),
		.as_bytes = (uint64_t)kgb_be_env_u32("KGB_PYREC_AS_MB", 16384) << 20,
		.no_network = true,
		.env = (const char *const *)env,
		.stdin_data = request,
		.stdin_len = strlen(request),
	};
	kgb_sandbox_result_t sr = { 0 };
	int rc = -1;
	if (kgb_sandbox_run(&so, argv, NULL, NULL, &sr, err, errlen) != 0)
		goto out_env;
	if (sr.timed_out) {
		out->verdict = KGB_V_TIMEOUT;
		snprintf(out->message, sizeof out->message, "the recording ran past %u ms", so.wall_ms);
		rc = 0;
		goto out;
	}
	if (sr.exit_code != 0) {
		kgb_err(err, errlen, "the recorder %s (exit %d, signal %d): %.300s",
		        sr.exit_code == 3 ? "cannot import torch or triton" : "failed", sr.exit_code, sr.signo,
		        output_tail(&sr));
		goto out;
	}
	rc = read_recording(&sr, "", c, out, err, errlen);
out:
	kgb_sandbox_release(&sr);
out_env:
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
	return rc;
}

/* ---- the recorder server (docs/python-candidates.md, "The recorder server") ---- */

const char *kgb_pycand_server_socket(int interpret, char *buf, size_t n)
{
	const char *dir = getenv("KGB_PYREC_SERVER");
	if (!dir || !*dir || interpret < 0)
		return NULL;
	int w = snprintf(buf, n, "%s/%s.sock", dir, interpret ? "interpret" : "device");
	return w > 0 && (size_t)w < n && (size_t)w < sizeof(((struct sockaddr_un *)0)->sun_path) ? buf : NULL;
}

int kgb_pycand_server_run(const char *python, const char *recorder, int interpret, const char *socket_path,
                          char *err, size_t errlen)
{
	char **env = recorder_env(python);
	const char *argv[] = { python, "-s", recorder, "--serve", socket_path, interpret ? "interpret" : "device",
		                   NULL };
	/* no wall or CPU limit of its own: it only forks, and each batch takes the limits
	 * it is given; it ends when the worker does */
	kgb_sandbox_opts_t so = {
		.wall_ms = UINT32_MAX,
		.cpu_s = UINT32_MAX,
		.no_network = true,
		.env = (const char *const *)env,
	};
	kgb_sandbox_result_t sr = { 0 };
	int rc = -1;
	if (kgb_sandbox_run(&so, argv, NULL, NULL, &sr, err, errlen) == 0) {
		size_t ll;
		const char *last = kgb_last_line(sr.output, &ll);
		kgb_err(err, errlen, "the recorder server ended (exit %d, signal %d): %.*s", sr.exit_code, sr.signo,
		        (int)KGB_MIN(ll, (size_t)300), last);
		rc = sr.exit_code == 3 ? -2 : 0;
		kgb_sandbox_release(&sr);
	}
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
	return rc;
}

/* The batch through the recorder server at sock. Returns 1 when there is no server
 * to take it (the caller starts the recorder itself), else 0 with sr filled as
 * kgb_sandbox_run fills it: the batch's directory, its output, how it ended. */
static int server_record(const char *sock, const char *batch, size_t len, uint64_t as_bytes, uint32_t wall_ms,
                         kgb_sandbox_result_t *sr)
{
	memset(sr, 0, sizeof *sr);
	sr->exit_code = -1;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	kgb_strlcpy(a.sun_path, sock, sizeof a.sun_path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 1;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		close(fd);
		return 1;
	}
	const char *base = getenv("TMPDIR");
	snprintf(sr->dir, sizeof sr->dir, "%s/kgb-compile.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(sr->dir)) {
		sr->dir[0] = 0;
		close(fd);
		return 1;
	}
	json_t *h = json_pack("{s:s, s:I, s:I, s:I}", "dir", sr->dir, "length", (json_int_t)len, "as_bytes",
	                      (json_int_t)as_bytes, "cpu_s", (json_int_t)(wall_ms / 1000 + 1));
	char *head = json_dumps(h, JSON_COMPACT);
	json_decref(h);
	double t0 = kgb_now_ms();
	bool sent = head && kgb_write_all(fd, head, strlen(head)) == 0 && kgb_write_all(fd, "\n", 1) == 0 &&
	            kgb_write_all(fd, batch, len) == 0;
	free(head);
	char buf[512];
	size_t blen = 0;
	long pid = 0;
	bool ended = false, eof = false;
	while (sent && !ended && !eof) {
		double left = wall_ms - (kgb_now_ms() - t0);
		if (left <= 0) {
			sr->timed_out = true;
			break;
		}
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int pr = poll(&pf, 1, left > 1000 ? 1000 : (int)left + 1);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr <= 0)
			continue;
		ssize_t r = read(fd, buf + blen, sizeof buf - 1 - blen);
		if (r <= 0) {
			eof = r == 0 || (errno != EINTR && errno != EAGAIN);
			continue;
		}
		blen += (size_t)r;
		buf[blen] = 0;
		char *nl;
		while ((nl = strchr(buf, '\n'))) {
			*nl = 0;
			if (strncmp(buf, "pid ", 4) == 0)
				pid = strtol(buf + 4, NULL, 10);
			else if (strncmp(buf, "exit ", 5) == 0) {
				sr->exit_code = (int)strtol(buf + 5, NULL, 10);
				ended = true;
			} else if (strncmp(buf, "error ", 6) == 0) {
				sr->exit_code = 2;
				ended = true;
			}
			blen -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, blen + 1);
		}
		if (blen == sizeof buf - 1)
			blen = 0;   /* a line that long is no answer of the server's */
	}
	/* its session: the batch and its children, past their time, or what the
	 * candidates left running behind a batch that ended (as the sandbox kills its
	 * group's stragglers) */
	if (pid > 0)
		kill((pid_t)-pid, SIGKILL);
	close(fd);
	if (!pid && !ended && !sr->timed_out) {
		/* the server took nothing (it was ending, or it refused): not used */
		kgb_rmtree(sr->dir);
		sr->dir[0] = 0;
		return 1;
	}
	sr->wall_ms = kgb_now_ms() - t0;
	char path[600], e[64];
	snprintf(path, sizeof path, "%s/output.log", sr->dir);
	size_t olen = 0;
	char *out = kgb_read_file(path, &olen, e, sizeof e);
	if (out && olen > 65536) {
		memmove(out, out + olen - 65536, 65536);
		olen = 65536;
		out[olen] = 0;
	}
	sr->output = out ? out : kgb_xstrdup("");
	sr->output_len = out ? olen : 0;
	sr->net_isolated = true;   /* the server's own namespace */
	return 0;
}

int kgb_pycand_record_batch(const char *python, const char *recorder, char *const *requests, size_t n,
                            const kgb_case_t *const *cases, int interpret, int device_index, uint64_t as_bytes,
                            const char *device_lock, kgb_pycand_out_t *outs, kgb_pycand_batch_info_t *info,
                            char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		memset(&outs[i], 0, sizeof outs[i]);
	if (info)
		memset(info, 0, sizeof *info);
	if (n == 0)
		return 0;
	uint32_t case_ms = kgb_be_env_u32("KGB_PYREC_WALL_MS", 180000);
	/* the device lock each child takes shared around its recording, with the lock's
	 * trace (worker/devlock.h) */
	char *lock = NULL;
	if (device_lock && *device_lock) {
		json_t *l = json_object();
		const char *trace = getenv("KGB_DEVLOCK_TRACE");
		json_object_set_new(l, "path", json_string(device_lock));
		json_object_set_new(l, "trace", trace && *trace ? json_string(trace) : json_null());
		lock = json_dumps(l, JSON_COMPACT);
		json_decref(l);
	}
	/* the batch: the requests' text spliced into one JSON object */
	size_t total = 200 + (lock ? strlen(lock) : 0);
	for (size_t i = 0; i < n; i++)
		total += strlen(requests[i]) + 1;
	/* on the CPU the cases are recorded side by side (KGB_PYREC_JOBS, worker/sizing.h);
	 * on a device one at a time */
	uint32_t par = interpret == 1 ? kgb_helper_jobs() : kgb_be_env_u32("KGB_PYREC_JOBS", 1);
	/* each child records several cases in turn, each importing the module afresh
	 * (docs/python-candidates.md): on the CPU 8, so that the side-by-side children
	 * share the batch; on a device every case of the batch, one CUDA context for them */
	uint32_t per = KGB_MIN(KGB_MAX(kgb_be_env_u32("KGB_PYREC_CASES_PER_CHILD", interpret == 1 ? 8 : 1024), 1u), 1024u);
	/* launches compiled once per worker, not once per job: the recorder keeps a memo per
	 * module text under the compile cache (docs/python-candidates.md) */
	const char *cdir = kgb_compile_cache_dir();
	json_t *memo = cdir ? json_sprintf("%s/pyrec", cdir) : json_null();
	char *memo_text = json_dumps(memo, JSON_ENCODE_ANY);
	json_decref(memo);
	total += strlen(memo_text);
	char *batch = kgb_xmalloc(total);
	size_t o = (size_t)snprintf(batch, total,
	                            "{\"interpret\":%s,\"device_index\":%d,\"timeout_s\":%.3f,\"parallel\":%u,"
	                            "\"cases_per_child\":%u,\"device_lock\":%s,\"compile_memo\":%s,\"batch\":[",
	                            interpret < 0 ? "null" : interpret ? "true" : "false", device_index,
	                            case_ms / 1000.0, par, per, lock ? lock : "null", memo_text);
	free(lock);
	free(memo_text);
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(requests[i]);
		memcpy(batch + o, requests[i], l);
		o += l;
		batch[o++] = i + 1 < n ? ',' : ']';
	}
	batch[o++] = '}';
	batch[o] = 0;

	char **env = recorder_env(python);
	const char *argv[] = { python, "-s", recorder, "-", ".", NULL };
	/* every case has its own limit inside the batch; the whole batch one more */
	uint64_t wall = (uint64_t)case_ms * n + 60000;
	kgb_sandbox_opts_t so = {
		.wall_ms = wall > UINT32_MAX ? UINT32_MAX : (uint32_t)wall,
		.as_bytes = as_bytes,
		.no_network = true,
		.env = (const char *const *)env,
		.stdin_data = batch,
		.stdin_len = o,
	};
	kgb_sandbox_result_t sr = { 0 };
	int rc = -1;
	json_t *st = NULL;
	/* the worker's recorder server when there is one (torch imported once, a fork per
	 * batch), else a recorder of the batch's own */
	char sock[256];
	const char *sp = kgb_pycand_server_socket(interpret, sock, sizeof sock);
	if ((!sp || server_record(sp, batch, o, as_bytes, so.wall_ms, &sr) != 0) &&
	    kgb_sandbox_run(&so, argv, NULL, NULL, &sr, err, errlen) != 0)
		goto out_env;
	if (sr.timed_out) {
		kgb_err(err, errlen, "the recorder's batch of %zu case(s) ran past %u ms", n, so.wall_ms);
		goto out;
	}
	if (sr.exit_code != 0) {
		kgb_err(err, errlen, "the recorder %s (exit %d, signal %d): %.300s",
		        sr.exit_code == 3 ? "cannot import torch or triton" : "failed", sr.exit_code, sr.signo,
		        output_tail(&sr));
		if (sr.exit_code == 3)
			rc = -2;
		goto out;
	}
	size_t len = 0;
	char *stext = kgb_sandbox_read(&sr, "batch-seconds.json", &len);
	json_error_t je;
	st = stext ? json_loadb(stext, len, 0, &je) : NULL;
	free(stext);
	if (info) {
		info->startup_s = json_number_value(json_object_get(st, "startup"));
		info->server = json_is_true(json_object_get(st, "server"));
	}
	json_decref(st);
	stext = kgb_sandbox_read(&sr, "batch.json", &len);
	st = stext ? json_loadb(stext, len, 0, &je) : NULL;
	free(stext);
	if (!json_is_array(st) || json_array_size(st) != n) {
		kgb_err(err, errlen, "the recorder wrote no batch.json for %zu case(s)", n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_array_get(st, i);
		char prefix[32], e[256];
		snprintf(prefix, sizeof prefix, "%zu/", i);
		if (json_is_true(json_object_get(s, "timed_out"))) {
			outs[i].verdict = KGB_V_TIMEOUT;
			snprintf(outs[i].message, sizeof outs[i].message, "the recording ran past %u ms", case_ms);
			continue;
		}
		json_int_t ex = json_integer_value(json_object_get(s, "exit"));
		json_int_t sig = json_integer_value(json_object_get(s, "signal"));
		if (ex != 0 || sig != 0) {
			/* a malformed request is kgb's fault; a child that died otherwise was
			 * killed by what the candidate's module did in it (or ran out of memory) */
			outs[i].verdict = ex == 2 ? KGB_V_INFRA_ERROR : KGB_V_CRASH;
			snprintf(outs[i].message, sizeof outs[i].message, "the recording child failed (exit %d, signal %d): %.300s",
			         (int)ex, (int)sig, output_tail(&sr));
			continue;
		}
		if (read_recording(&sr, prefix, cases[i], &outs[i], e, sizeof e) != 0) {
			outs[i].verdict = KGB_V_INFRA_ERROR;
			snprintf(outs[i].message, sizeof outs[i].message, "%s", e);
		}
	}
	rc = 0;
out:
	json_decref(st);
	kgb_sandbox_release(&sr);
out_env:
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
	free(batch);
	return rc;
}

const char *kgb_pycand_function(const kgb_case_t *c, char *buf, size_t n)
{
	if (strcmp(c->op->source, "aten") == 0)
		return NULL;   /* named by the recorder after the overload the case calls */
	snprintf(buf, n, "%s", c->op->name);
	return buf;
}

char *kgb_pycand_find_replayer(const char *recorder)
{
	const char *slash = strrchr(recorder, '/');
	char *p = kgb_xasprintf("%.*skgb_replay.py", slash ? (int)(slash - recorder + 1) : 0, recorder);
	if (access(p, R_OK) == 0)
		return p;
	free(p);
	return NULL;
}

int kgb_pycand_replay_run(const char *python, const char *replayer, const char *header, const void *blob,
                          size_t bloblen, size_t ncases, kgb_sandbox_result_t *sr, char *err, size_t errlen)
{
	size_t hl = strlen(header);
	char *in = kgb_xmalloc(hl + 1 + bloblen);
	memcpy(in, header, hl);
	in[hl] = '\n';
	if (bloblen)
		memcpy(in + hl + 1, blob, bloblen);
	char **env = recorder_env(python);
	const char *argv[] = { python, "-s", replayer, ".", NULL };
	uint64_t wall = (uint64_t)kgb_be_env_u32("KGB_PYREC_WALL_MS", 180000) * (ncases ? ncases : 1) + 60000;
	kgb_sandbox_opts_t so = {
		.wall_ms = wall > UINT32_MAX ? UINT32_MAX : (uint32_t)wall,
		.as_bytes = (uint64_t)kgb_be_env_u32("KGB_PYREC_AS_MB", 16384) << 20,
		.no_network = true,
		.env = (const char *const *)env,
		.stdin_data = in,
		.stdin_len = hl + 1 + bloblen,
	};
	int rc = -1;
	memset(sr, 0, sizeof *sr);
	if (kgb_sandbox_run(&so, argv, NULL, NULL, sr, err, errlen) != 0)
		goto out;
	if (sr->timed_out)
		kgb_err(err, errlen, "the replay of %zu case(s) ran past %u ms", ncases, so.wall_ms);
	else if (sr->exit_code != 0)
		kgb_err(err, errlen, "the replayer %s (exit %d, signal %d): %.300s",
		        sr->exit_code == 3 ? "cannot import torch or triton" : "failed", sr->exit_code, sr->signo,
		        output_tail(sr));
	else
		rc = 0;
	if (rc != 0 && sr->exit_code == 3)
		rc = -2;
	if (rc != 0)
		kgb_sandbox_release(sr);
out:
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
	free(in);
	return rc;
}

char *kgb_pycand_find_python(void)
{
	const char *e = getenv("KGB_PYREC_PYTHON");
	if (!e || !*e)
		e = getenv("KGB_TRITON_PYTHON");
	return kgb_find_program(e && *e ? e : "python3");
}

bool kgb_pycand_probe(uint32_t wall_ms, char *note, size_t notelen)
{
	char *python = kgb_pycand_find_python(), *recorder = kgb_pycand_find_recorder();
	bool ok = false;
	if (!python || !recorder) {
		const char *e = getenv("KGB_PYREC_PYTHON");
		if (!python)
			snprintf(note, notelen, "no Python to record with ('%s' is not an executable; kgb-worker --python)",
			         e && *e ? e : "python3");
		else
			snprintf(note, notelen, "the recorder kgb_record.py is not installed next to kgb-worker "
			                        "(pyrec/ or ../libexec/kgb/pyrec/)");
		goto out;
	}
	char **env = recorder_env(python);
	const char *argv[] = { python, "-s", recorder, "--probe", NULL };
	kgb_sandbox_opts_t so = {
		.wall_ms = wall_ms,
		.as_bytes = (uint64_t)kgb_be_env_u32("KGB_PYREC_AS_MB", 16384) << 20,
		.no_network = true,
		.env = (const char *const *)env,
	};
	kgb_sandbox_result_t sr = { 0 };
	char err[512];
	if (kgb_sandbox_run(&so, argv, NULL, NULL, &sr, err, sizeof err) != 0) {
		snprintf(note, notelen, "the probe of %s did not run: %s", python, err);
	} else {
		/* the probe's last line says what it found */
		char line[400] = "";
		size_t ll;
		const char *last = kgb_last_line(sr.output, &ll);
		snprintf(line, sizeof line, "%.*s", (int)ll, last);
		if (sr.timed_out)
			snprintf(note, notelen, "%s -s %s --probe ran past %u ms", python, recorder, wall_ms);
		else if (sr.exit_code == 0)
			ok = true;
		if (!sr.timed_out)
			snprintf(note, notelen, "%s", *line ? line : "the probe wrote nothing");
		if (!ok && sr.exit_code != 3 && !sr.timed_out)
			snprintf(note + strlen(note), notelen - strlen(note), " (exit %d, signal %d)", sr.exit_code,
			         sr.signo);
		kgb_sandbox_release(&sr);
	}
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
out:
	free(python);
	free(recorder);
	return ok;
}

void kgb_pycand_out_release(kgb_pycand_out_t *o)
{
	if (!o)
		return;
	free(o->recording);
	free(o->plan_json);
	free(o->steps);
	kgb_plan_destroy(&o->plan);
	memset(o, 0, sizeof *o);
}
