/* Compile sandbox and compile cache (worker/compile.c), and the Triton helper
 * (worker/triton_compile.py) when Triton is importable here: it compiles for an
 * explicit target, so no GPU is needed. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include "test.h"
#include "compile.h"
#include "util.h"
#include "backend.h"
#include "backends/cuda_api.h"

static void key_of(const char *lang, const char *src, const char *opt, char hex[65])
{
	kgb_ckey_t k;
	kgb_ckey_init(&k);
	kgb_ckey_add_str(&k, "lang", lang);
	kgb_ckey_add_str(&k, "source", src);
	kgb_ckey_add_str(&k, "option", opt);
	kgb_ckey_final(&k, hex);
}

TEST(compile_key_fields_matter)
{
	char a[65], b[65], c[65], d[65], e[65];
	key_of("cuda", "src", "-DX=1", a);
	key_of("cuda", "src", "-DX=1", b);
	ASSERT_EQ_STR(a, b);
	ASSERT_EQ_INT(strlen(a), 64);
	key_of("triton", "src", "-DX=1", c);
	ASSERT_TRUE(strcmp(a, c) != 0);
	key_of("cuda", "src", "-DX=2", d);
	ASSERT_TRUE(strcmp(a, d) != 0);
	/* field boundaries are part of the key */
	key_of("cuda", "src-", "DX=1", e);
	ASSERT_TRUE(strcmp(a, e) != 0);
	/* an absent field differs from an empty one */
	key_of("cuda", "src", NULL, d);
	key_of("cuda", "src", "", e);
	ASSERT_TRUE(strcmp(d, e) != 0);
}

TEST(compile_cache_roundtrip)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/cache", kgb_test_tmpdir());
	setenv("KGB_CACHE_DIR", dir, 1);
	char key[65];
	key_of("cuda", "kernel text", "", key);
	size_t n = 99;
	ASSERT_TRUE(kgb_compile_cache_get(key, "kernel.cubin", &n) == NULL);
	ASSERT_EQ_INT(kgb_compile_cache_put(key, "kernel.cubin", "\177ELF\0x", 6), 0);
	char *got = kgb_compile_cache_get(key, "kernel.cubin", &n);
	ASSERT_TRUE(got != NULL);
	ASSERT_EQ_INT(n, 6);
	ASSERT_TRUE(memcmp(got, "\177ELF\0x", 6) == 0);
	free(got);
	ASSERT_CONTAINS(kgb_compile_cache_dir(), "/cache/compile");
	/* keys and names that could escape the directory are refused */
	ASSERT_EQ_INT(kgb_compile_cache_put("../x", "kernel.cubin", "a", 1), -1);
	ASSERT_EQ_INT(kgb_compile_cache_put(key, "../kernel.cubin", "a", 1), -1);
	ASSERT_EQ_INT(kgb_compile_cache_put("ABCDEF", "k", "a", 1), -1);
}

/* Two makers of one entry: the second waits on the entry's lock while the first holds
 * it, then finds what the first put (the slots of a worker starting one candidate's
 * jobs at once compile each kernel once). */
TEST(compile_cache_lock_serialises_makers)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/cache", kgb_test_tmpdir());
	setenv("KGB_CACHE_DIR", dir, 1);
	char key[65];
	key_of("triton", "locked kernel", "", key);
	ASSERT_TRUE(kgb_compile_cache_lock("../x") == -1);
	int held[2], go[2];
	ASSERT_EQ_INT(pipe(held), 0);
	ASSERT_EQ_INT(pipe(go), 0);
	pid_t pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		int fd = kgb_compile_cache_lock(key);
		char b = 1;
		if (fd < 0 || write(held[1], &b, 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(1);
		kgb_compile_cache_put(key, "kernel.cubin", "made once", 9);
		kgb_compile_cache_unlock(fd);
		_exit(0);
	}
	char b;
	ASSERT_EQ_INT(read(held[0], &b, 1), 1);
	/* the child holds it: a non-blocking try on the same lock file fails */
	char path[1400];
	snprintf(path, sizeof path, "%s/%s/.lock", kgb_compile_cache_dir(), key);
	int probe = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_TRUE(probe >= 0);
	ASSERT_TRUE(flock(probe, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK);
	close(probe);
	ASSERT_EQ_INT(write(go[1], &b, 1), 1);
	int fd = kgb_compile_cache_lock(key);   /* waits for the child's unlock */
	ASSERT_TRUE(fd >= 0);
	size_t n = 0;
	char *got = kgb_compile_cache_get(key, "kernel.cubin", &n);
	ASSERT_TRUE(got != NULL && n == 9 && memcmp(got, "made once", 9) == 0);
	free(got);
	kgb_compile_cache_unlock(fd);
	int st = 0;
	ASSERT_EQ_INT(waitpid(pid, &st, 0), pid);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(held[0]);
	close(held[1]);
	close(go[0]);
	close(go[1]);
}

TEST(sandbox_exec_output_status_env)
{
	const char *argv[] = { "/bin/sh", "-c", "echo out; echo err >&2; env; cat; pwd; exit 3", NULL };
	const char *env[] = { "ONLY=this", NULL };
	kgb_sandbox_opts_t o = { .wall_ms = 10000, .env = env, .stdin_data = "from-stdin\n", .stdin_len = 11 };
	kgb_sandbox_result_t r;
	char err[256];
	setenv("KGB_SECRET_TOKEN", "s3cr3t", 1);
	ASSERT_OK(kgb_sandbox_run(&o, argv, NULL, NULL, &r, err, sizeof err), err);
	ASSERT_EQ_INT(r.exit_code, 3);
	ASSERT_FALSE(r.timed_out);
	ASSERT_CONTAINS(r.output, "out\n");
	ASSERT_CONTAINS(r.output, "err\n");
	ASSERT_CONTAINS(r.output, "ONLY=this");
	ASSERT_CONTAINS(r.output, "from-stdin");
	ASSERT_CONTAINS(r.output, r.dir); /* the working directory is the private one */
	ASSERT_TRUE(strstr(r.output, "s3cr3t") == NULL);
	char dir[600];
	snprintf(dir, sizeof dir, "%s", r.dir);
	ASSERT_EQ_INT(access(dir, F_OK), 0);
	kgb_sandbox_release(&r);
	ASSERT_EQ_INT(access(dir, F_OK), -1); /* removed */
}

TEST(sandbox_wall_limit_kills_group)
{
	/* the grandchild (sleep) must die with the group, or the output pipe stays open */
	const char *argv[] = { "/bin/sh", "-c", "sleep 30 & sleep 30", NULL };
	kgb_sandbox_opts_t o = { .wall_ms = 300 };
	kgb_sandbox_result_t r;
	char err[256];
	ASSERT_OK(kgb_sandbox_run(&o, argv, NULL, NULL, &r, err, sizeof err), err);
	ASSERT_TRUE(r.timed_out);
	ASSERT_TRUE(r.wall_ms < 5000);
	ASSERT_EQ_INT(r.signo, 9);
	kgb_sandbox_release(&r);
}

static int alloc_big(void *arg, const char *dir)
{
	(void)arg;
	(void)dir;
	void *p = malloc((size_t)1 << 30);
	return p ? 0 : 7;
}

static int write_file(void *arg, const char *dir)
{
	(void)dir;
	FILE *f = fopen("result.bin", "w");
	if (!f)
		return 1;
	fputs((const char *)arg, f);
	fclose(f);
	/* no network inside: loopback is down in a fresh namespace */
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(0x7f000001) };
	int rc = connect(s, (struct sockaddr *)&a, sizeof a);
	printf("connect=%d errno=%d\n", rc, rc ? errno : 0);
	return 0;
}

TEST(sandbox_fn_limits_and_files)
{
	kgb_sandbox_opts_t o = { .wall_ms = 10000, .as_bytes = (uint64_t)256 << 20 };
	kgb_sandbox_result_t r;
	char err[256];
	ASSERT_OK(kgb_sandbox_run(&o, NULL, alloc_big, NULL, &r, err, sizeof err), err);
#if defined(__SANITIZE_ADDRESS__)
	ASSERT_EQ_INT(r.exit_code, 0); /* no address-space limit in-process under ASan */
#else
	ASSERT_EQ_INT(r.exit_code, 7); /* RLIMIT_AS refused the gigabyte */
#endif
	kgb_sandbox_release(&r);

	kgb_sandbox_opts_t o2 = { .wall_ms = 10000, .no_network = true };
	ASSERT_OK(kgb_sandbox_run(&o2, NULL, write_file, "payload", &r, err, sizeof err), err);
	ASSERT_EQ_INT(r.exit_code, 0);
	size_t n;
	char *got = kgb_sandbox_read(&r, "result.bin", &n);
	ASSERT_TRUE(got != NULL);
	ASSERT_EQ_STR(got, "payload");
	free(got);
	if (r.net_isolated)
		ASSERT_CONTAINS(r.output, "connect=-1 errno=101"); /* ENETUNREACH: no route at all */
	else
		printf("    note: network namespace not available here\n");
	kgb_sandbox_release(&r);
}

static const char triton_src[] =
	"import triton\n"
	"import triton.language as tl\n"
	"@triton.jit\n"
	"def scale(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):\n"
	"    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
	"    m = offs < n\n"
	"    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)\n";

/* Run the helper the way the backend does and parse what it writes. */
TEST(cuda_triton_helper_abi)
{
	char *py = kgb_find_program("python3");
	if (!py) {
		printf("    skipped: no python3\n");
		return;
	}
	const char *probe[] = { py, "-c", "import triton", NULL };
	const char *pathenv[] = { NULL, NULL };
	char pe[4200];
	snprintf(pe, sizeof pe, "PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	pathenv[0] = pe;
	kgb_sandbox_opts_t o = { .wall_ms = 60000, .env = pathenv };
	kgb_sandbox_result_t r;
	char err[256];
	ASSERT_OK(kgb_sandbox_run(&o, probe, NULL, NULL, &r, err, sizeof err), err);
	int have = r.exit_code == 0;
	kgb_sandbox_release(&r);
	if (!have) {
		printf("    skipped: triton not importable\n");
		free(py);
		return;
	}
	char helper[1024];
	snprintf(helper, sizeof helper, "%s/worker/triton_compile.py", getenv("KGB_SOURCE_DIR") ? getenv("KGB_SOURCE_DIR") : ".");
	if (access(helper, R_OK) != 0) {
		printf("    skipped: %s not found (run from the source tree or set KGB_SOURCE_DIR)\n", helper);
		free(py);
		return;
	}
	char *abs = realpath(helper, NULL);
	char reqbuf[4096];
	char *esc = kgb_xmalloc(sizeof triton_src * 2);
	size_t j = 0;
	for (const char *s = triton_src; *s; s++) {
		if (*s == '\n') {
			esc[j++] = '\\';
			esc[j++] = 'n';
		} else if (*s == '"') {
			esc[j++] = '\\';
			esc[j++] = '"';
		} else {
			esc[j++] = *s;
		}
	}
	esc[j] = 0;
	snprintf(reqbuf, sizeof reqbuf,
	         "{\"source\": \"%s\", \"entry\": \"scale\", \"signature\": \"*fp32,*fp32,i32,fp32\","
	         "\"constants\": {\"BLOCK\": \"256\"}, \"num_warps\": 2, \"num_stages\": 2,"
	         "\"target\": {\"backend\": \"cuda\", \"arch\": 90, \"warp_size\": 32}}",
	         esc);
	const char *argv[] = { py, "-s", abs, ".", NULL };
	kgb_sandbox_opts_t o2 = { .wall_ms = 120000, .env = pathenv, .no_network = true, .nofile = 1024,
		                      .stdin_data = reqbuf, .stdin_len = strlen(reqbuf) };
	ASSERT_OK(kgb_sandbox_run(&o2, argv, NULL, NULL, &r, err, sizeof err), err);
	if (r.exit_code != 0)
		FAIL("helper failed (%d): %s", r.exit_code, r.output);
	size_t n, bn;
	char *abi = kgb_sandbox_read(&r, "kernel.abi.json", &n);
	char *bin = kgb_sandbox_read(&r, "kernel.cubin", &bn);
	ASSERT_TRUE(abi && bin);
	ASSERT_TRUE(bn > 4 && memcmp(bin, "\177ELF", 4) == 0);
	kgb_cuda_abi_t a;
	ASSERT_OK(kgb_cuda_abi_parse(abi, n, "kernel.abi.json", &a, err, sizeof err), err);
	ASSERT_EQ_STR(a.kernel_name, "scale");
	ASSERT_EQ_INT(a.nargs, 4); /* BLOCK is constexpr: not a launch argument */
	ASSERT_EQ_STR(a.args[2].name, "n");
	ASSERT_EQ_STR(a.args[3].type, "fp32");
	ASSERT_EQ_INT(a.num_warps, 2);
	free(abi);
	free(bin);
	kgb_sandbox_release(&r);

	/* a wrong signature is refused with the parameter names */
	snprintf(reqbuf, sizeof reqbuf,
	         "{\"source\": \"%s\", \"entry\": \"scale\", \"signature\": \"*fp32,i32\","
	         "\"constants\": {\"BLOCK\": 256}}", esc);
	o2.stdin_data = reqbuf;
	o2.stdin_len = strlen(reqbuf);
	ASSERT_OK(kgb_sandbox_run(&o2, argv, NULL, NULL, &r, err, sizeof err), err);
	ASSERT_EQ_INT(r.exit_code, 2);
	ASSERT_CONTAINS(r.output, "x_ptr, out_ptr, n, alpha");
	kgb_sandbox_release(&r);
	free(esc);
	free(abs);
	free(py);
}

static const char add_cu[] =
	"extern \"C\" __global__ void add_kernel(const T_self *self, const T_other *other, T_out *out,\n"
	"                                      float alpha, int n) {\n"
	"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) STORE_out(out, i, LOAD_self(self, i) + alpha * LOAD_other(other, i));\n"
	"}\n";

/* CUDA C through the sandboxed NVRTC child and the cache, with the fp16 prelude. */
TEST(cuda_precompile_cuda_c_cached)
{
	char why[256];
	if (!kgb_cuda_nvrtc(why, sizeof why)) {
		printf("    skipped: %s\n", why);
		return;
	}
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/cache", kgb_test_tmpdir());
	setenv("KGB_CACHE_DIR", dir, 1);
	const char *names[] = { "self", "other", "out" };
	kgb_dtype_t dts[] = { KGB_DT_F16, KGB_DT_F16, KGB_DT_F16 };
	kgb_compile_req_t req = { .lang = KGB_LANG_CUDA, .entry = "add_kernel", .source = add_cu,
		                      .source_len = strlen(add_cu), .name = "add.cu", .tensor_names = names,
		                      .tensor_dtypes = dts, .ntensors = 3 };
	char log[4096], err[2048];
	double t0 = kgb_now_ms();
	ASSERT_OK(kgb_cuda_precompile(90, &req, log, sizeof log, err, sizeof err), err);
	double first = kgb_now_ms() - t0;
	t0 = kgb_now_ms();
	ASSERT_OK(kgb_cuda_precompile(90, &req, log, sizeof log, err, sizeof err), err);
	double second = kgb_now_ms() - t0;
	printf("    first %.0f ms, cached %.1f ms\n", first, second);
	ASSERT_TRUE(second < first);
	/* a different arch is a different entry: compiles again, still fine */
	ASSERT_OK(kgb_cuda_precompile(80, &req, log, sizeof log, err, sizeof err), err);

	/* a compile error names the file and the problem, and is cached as one */
	static const char bad[] = "extern \"C\" __global__ void add_kernel(float *o) { o[0] = nope; }\n";
	req.source = bad;
	req.source_len = strlen(bad);
	ASSERT_EQ_INT(kgb_cuda_precompile(90, &req, log, sizeof log, err, sizeof err), KGB_BE_COMPILE);
	ASSERT_CONTAINS(log, "nope");
	ASSERT_CONTAINS(log, "add.cu");
	ASSERT_EQ_INT(kgb_cuda_precompile(90, &req, log, sizeof log, err, sizeof err), KGB_BE_COMPILE);
	ASSERT_CONTAINS(err, "(cached)");
	/* options outside the allowlist are refused before any compile */
	req.source = add_cu;
	req.source_len = strlen(add_cu);
	req.options = "-I/etc";
	ASSERT_EQ_INT(kgb_cuda_precompile(90, &req, log, sizeof log, err, sizeof err), KGB_BE_COMPILE);
	ASSERT_CONTAINS(err, "-I/etc");
}

TEST(cuda_triton_signature_from_tensors)
{
	const char *names[] = { "self", "out", "mask" };
	kgb_dtype_t dts[] = { KGB_DT_BF16, KGB_DT_F32, KGB_DT_BOOL };
	char err[256];
	char *s = kgb_cuda_triton_signature("*@self, *@out,i32:16,*@mask,fp32", names, dts, 3, err, sizeof err);
	ASSERT_TRUE(s != NULL);
	ASSERT_EQ_STR(s, "*bf16,*fp32,i32:16,*i1,fp32");
	free(s);
	ASSERT_TRUE(kgb_cuda_triton_signature("*@self,*@nope", names, dts, 3, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "'nope'");
}

static const char silu_py[] =
	"import triton\n"
	"import triton.language as tl\n"
	"@triton.jit\n"
	"def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
	"    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
	"    m = offs < n\n"
	"    x = tl.load(x_ptr + offs, mask=m).to(tl.float32)\n"
	"    tl.store(out_ptr + offs, (x / (1.0 + tl.exp(-x))).to(out_ptr.dtype.element_ty), mask=m)\n";

/* The whole Triton path without a GPU: helper in the sandbox, ABI parsed, cache hit. */
TEST(cuda_precompile_triton_cached)
{
	char *py = kgb_find_program("python3");
	char helper[1024];
	snprintf(helper, sizeof helper, "%s/worker/triton_compile.py", getenv("KGB_SOURCE_DIR") ? getenv("KGB_SOURCE_DIR") : ".");
	char *abs = realpath(helper, NULL);
	if (!py || !abs) {
		printf("    skipped: no python3 or no %s\n", helper);
		free(py);
		return;
	}
	setenv("KGB_TRITON_HELPER", abs, 1);
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/cache", kgb_test_tmpdir());
	setenv("KGB_CACHE_DIR", dir, 1);
	const char *names[] = { "self", "out" };
	kgb_dtype_t dts[] = { KGB_DT_F16, KGB_DT_F16 };
	kgb_plan_define_t consts[] = { { "BLOCK", "1024" } };
	kgb_plan_config_t cfg = { .constants = consts, .nconstants = 1, .num_warps = 4, .num_stages = 2, .num_ctas = 1 };
	kgb_compile_req_t req = { .lang = KGB_LANG_TRITON, .entry = "silu_kernel", .source = silu_py,
		                      .source_len = strlen(silu_py), .name = "silu.py", .tensor_names = names,
		                      .tensor_dtypes = dts, .ntensors = 2, .config = &cfg, .signature = "*@self,*@out,i32" };
	char log[4096], err[2048];
	double t0 = kgb_now_ms();
	int rc = kgb_cuda_precompile(90, &req, log, sizeof log, err, sizeof err);
	if (rc == KGB_BE_UNSUPPORTED) {
		printf("    skipped: %s\n", err);
		free(py);
		free(abs);
		return;
	}
	ASSERT_OK(rc, err);
	double first = kgb_now_ms() - t0;
	t0 = kgb_now_ms();
	ASSERT_OK(kgb_cuda_precompile(90, &req, log, sizeof log, err, sizeof err), err);
	double second = kgb_now_ms() - t0;
	printf("    first %.0f ms, cached %.0f ms\n", first, second);
	ASSERT_TRUE(second < first / 2);
	/* a kernel that does not compile is a compile error with Triton's message */
	kgb_plan_define_t bad[] = { { "BLOCK", "1000" } };
	cfg.constants = bad;
	ASSERT_EQ_INT(kgb_cuda_precompile(90, &req, log, sizeof log, err, sizeof err), KGB_BE_COMPILE);
	ASSERT_CONTAINS(err, "power of 2");
	/* the module's top-level code runs in the helper: it may read no file of the
	 * machine (worker/pyrec/kgb_confine.py) */
	char *hostile = kgb_xasprintf("import os\nSTOLEN = open('/etc/hostname').read()\n%s", silu_py);
	cfg.constants = consts;
	req.source = hostile;
	req.source_len = strlen(hostile);
	ASSERT_EQ_INT(kgb_cuda_precompile(90, &req, log, sizeof log, err, sizeof err), KGB_BE_COMPILE);
	ASSERT_CONTAINS(log, "may not read '/etc/hostname'");
	free(hostile);
	free(py);
	free(abs);
}

/* A CUDA C source reads no file but itself and the toolkit's headers (common/srcscan.c):
 * NVRTC itself would open any path an #include names and quote it in its log. */
TEST(cuda_nvrtc_includes_confined)
{
	char why[256];
	if (!kgb_cuda_nvrtc(why, sizeof why)) {
		printf("    skipped: %s\n", why);
		return;
	}
	char dir[1024], secret[1100];
	snprintf(dir, sizeof dir, "%s/cache", kgb_test_tmpdir());
	setenv("KGB_CACHE_DIR", dir, 1);
	snprintf(secret, sizeof secret, "%s/secret.h", kgb_test_tmpdir());
	FILE *f = fopen(secret, "w");
	ASSERT_TRUE(f != NULL);
	fputs("kgb_secret_token_4711 here\n", f);
	fclose(f);
	char *src = kgb_xasprintf("#include \"%s\"\nextern \"C\" __global__ void k(float *o) { o[0] = 1; }\n", secret);
	/* what NVRTC does unchecked: reads the file and quotes it */
	char *out = NULL, log[8192] = "", err[2048] = "";
	size_t n = 0;
	int rc = kgb_cuda_nvrtc_compile(src, "inc.cu", 90, true, NULL, 0, &out, &n, log, sizeof log);
	free(out);
	ASSERT_EQ_INT(rc, KGB_BE_COMPILE);
	ASSERT_CONTAINS(log, "kgb_secret_token_4711");
	/* through the worker's compile: refused before NVRTC runs, naming the include */
	const char *names[] = { "o" };
	kgb_dtype_t dts[] = { KGB_DT_F32 };
	kgb_compile_req_t req = { .lang = KGB_LANG_CUDA, .entry = "k", .source = src, .source_len = strlen(src),
		                      .name = "inc.cu", .tensor_names = names, .tensor_dtypes = dts, .ntensors = 1 };
	log[0] = 0;
	ASSERT_EQ_INT(kgb_cuda_precompile(90, &req, log, sizeof log, err, sizeof err), KGB_BE_COMPILE);
	ASSERT_CONTAINS(err, "inc.cu: line 1: #include \"");
	ASSERT_CONTAINS(err, "refused");
	ASSERT_TRUE(strstr(log, "kgb_secret_token_4711") == NULL && strstr(err, "kgb_secret_token_4711") == NULL);
	free(src);
	static const char parent[] = "#include \"../../../etc/hostname\"\nextern \"C\" __global__ void k(float *o) {}\n";
	req.source = parent;
	req.source_len = strlen(parent);
	ASSERT_EQ_INT(kgb_cuda_precompile(90, &req, log, sizeof log, err, sizeof err), KGB_BE_COMPILE);
	ASSERT_CONTAINS(err, "../../../etc/hostname\" refused");
	/* the toolkit's own headers still compile */
	static const char fp16[] = "#include <cuda_fp16.h>\n"
	                           "extern \"C\" __global__ void k(float *o) { o[0] = __half2float(__float2half(1.f)); }\n";
	req.source = fp16;
	req.source_len = strlen(fp16);
	ASSERT_OK(kgb_cuda_precompile(90, &req, log, sizeof log, err, sizeof err), err);
}

/* What the CUDA scrub (scrub_local) works with, without a GPU: the shared memory
 * scrub's PTX assembles for sm_90 (ptxas, when the toolkit is here), and the global
 * variables a module defines are found in its PTX and in its cubin (NVRTC), so that
 * each scrub can put them back; a constant, a shared array and an extern are not. */
TEST(cuda_scrub_ptx_and_module_globals)
{
	static const char src[] =
		"__device__ float memo[4096];\n"
		"__device__ int hits = 5;\n"
		"__constant__ float table[4] = {1, 2, 3, 4};\n"
		"extern \"C\" __global__ void k(float *o) {\n"
		"  __shared__ float tile[256];\n"
		"  tile[threadIdx.x] = memo[threadIdx.x] + table[threadIdx.x & 3];\n"
		"  __syncthreads();\n"
		"  memo[threadIdx.x] = o[threadIdx.x] = tile[255 - threadIdx.x] + hits++;\n"
		"}\n";
	char names[8][KGB_CUDA_NAME_MAX];
	static const char hand[] = ".version 6.0\n.target sm_50\n.address_size 64\n"
	                           ".visible .global .align 4 .b8 memo[16384]; // a memo\n"
	                           ".global .u32 count = 3;\n.extern .global .u32 other;\n"
	                           ".visible .entry k(.param .u64 o)\n{\n  .reg .b32 %r<2>;\n  ret;\n}\n";
	size_t n = kgb_cuda_global_names(hand, sizeof hand - 1, names, 8);
	ASSERT_EQ_INT(n, 2);
	ASSERT_EQ_STR(names[0], "memo");
	ASSERT_EQ_STR(names[1], "count");
	ASSERT_EQ_INT(kgb_cuda_global_names("\x7f" "ELF garbage", 12, names, 8), 0);

	const char *ptxas = access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? "/usr/local/cuda/bin/ptxas" : NULL;
	/* the scrub's kernel, and the timing gate's (cuda.c, cuda_gate) */
	const char *const kernels[][2] = { { "scrub", kgb_cuda_scrub_ptx() }, { "gate", kgb_cuda_gate_ptx() } };
	for (size_t i = 0; ptxas && i < KGB_ARRAY_LEN(kernels); i++) {
		char path[1024], cmd[3072], file[64];
		snprintf(file, sizeof file, "%s.ptx", kernels[i][0]);
		snprintf(path, sizeof path, "%s/%s", kgb_test_tmpdir(), file);
		kgb_test_write_file(file, kernels[i][1]);
		snprintf(cmd, sizeof cmd, "%s -arch=sm_90 %s -o %s.cubin 2>&1", ptxas, path, path);
		ASSERT_EQ_INT(system(cmd), 0);
	}
	if (!ptxas)
		printf("    ptxas not found: the scrub's and the gate's PTX not assembled\n");
	char why[256];
	if (!kgb_cuda_nvrtc(why, sizeof why)) {
		printf("    skipped (module globals from NVRTC's output): %s\n", why);
		return;
	}
	for (int want_ptx = 0; want_ptx < 2; want_ptx++) {
		char *out = NULL, log[4096];
		size_t outlen = 0;
		ASSERT_OK(kgb_cuda_nvrtc_compile(src, "memo.cu", 90, want_ptx, NULL, 0, &out, &outlen, log, sizeof log), log);
		n = kgb_cuda_global_names(out, outlen, names, 8);
		bool memo = false, hits = false;
		for (size_t i = 0; i < n; i++) {
			memo = memo || strstr(names[i], "memo") != NULL;
			hits = hits || strstr(names[i], "hits") != NULL;
			ASSERT_TRUE(strstr(names[i], "table") == NULL && strstr(names[i], "tile") == NULL);
		}
		if (!memo || !hits)
			FAIL("%s: globals found: %zu (memo %d, hits %d)", want_ptx ? "PTX" : "cubin", n, memo, hits);
		free(out);
	}
	/* the CUDA cheats of tests/integration/cheats compile for sm_90 through the backend's
	 * own path (prelude, NVRTC, cache), so that a GPU run judges them, not their syntax */
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/cache", kgb_test_tmpdir());
	setenv("KGB_CACHE_DIR", dir, 1);
	static const char *const cheats[] = { "add_smem_memo.cu", "add_global_memo.cu" };
	for (size_t i = 0; i < 2; i++) {
		char path[1024], log[4096], err[2048];
		snprintf(path, sizeof path, "%s/tests/integration/cheats/%s",
		         getenv("KGB_SOURCE_DIR") ? getenv("KGB_SOURCE_DIR") : ".", cheats[i]);
		size_t len = 0;
		char *text = kgb_read_file(path, &len, err, sizeof err);
		ASSERT_TRUE(text != NULL);
		const char *tn[] = { "self", "other", "out" };
		kgb_dtype_t td[] = { KGB_DT_F32, KGB_DT_F32, KGB_DT_F32 };
		kgb_compile_req_t req = { .lang = KGB_LANG_CUDA, .entry = "add_kernel", .source = text, .source_len = len,
			                      .name = cheats[i], .tensor_names = tn, .tensor_dtypes = td, .ntensors = 3 };
		if (kgb_cuda_precompile(90, &req, log, sizeof log, err, sizeof err) != 0)
			FAIL("%s: %s %s", cheats[i], err, log);
		free(text);
	}
}
