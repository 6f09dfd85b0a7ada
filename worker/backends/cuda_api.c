/* Run-time loading of the CUDA driver, NVML and NVRTC (see cuda_api.h). */
#include "cuda_api.h"

#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "backend_common.h"
#include "util.h"

#define KGB_CUDA_X_SYM(ret, name, args, sym, fallback) {#name, sym, fallback, 0},

static kgb_cuda_sym_t driver_syms[] = { KGB_CUDA_DRIVER_API(KGB_CUDA_X_SYM) };
static kgb_cuda_sym_t nvml_syms[] = { KGB_NVML_API(KGB_CUDA_X_SYM) };
static kgb_cuda_sym_t nvrtc_syms[] = { KGB_NVRTC_API(KGB_CUDA_X_SYM) };

/* Offsets are filled once: the X-macro lists give both the fields and the names, in the
 * same order, and every member is a function pointer. */
static pthread_once_t offsets_once = PTHREAD_ONCE_INIT;

static void fill_offsets(void)
{
	for (size_t i = 0; i < KGB_ARRAY_LEN(driver_syms); i++)
		driver_syms[i].offset = i * sizeof(void (*)(void));
	for (size_t i = 0; i < KGB_ARRAY_LEN(nvml_syms); i++)
		nvml_syms[i].offset = i * sizeof(void (*)(void));
	for (size_t i = 0; i < KGB_ARRAY_LEN(nvrtc_syms); i++)
		nvrtc_syms[i].offset = i * sizeof(void (*)(void));
}

_Static_assert(sizeof(kgb_cuda_api_t) == KGB_ARRAY_LEN(driver_syms) * sizeof(void (*)(void)),
               "driver table has only function pointers");
_Static_assert(sizeof(kgb_nvml_api_t) == KGB_ARRAY_LEN(nvml_syms) * sizeof(void (*)(void)),
               "nvml table has only function pointers");
_Static_assert(sizeof(kgb_nvrtc_api_t) == KGB_ARRAY_LEN(nvrtc_syms) * sizeof(void (*)(void)),
               "nvrtc table has only function pointers");

/* The driver symbol table, in struct order. */
const kgb_cuda_sym_t *kgb_cuda_driver_syms(size_t *n)
{
	pthread_once(&offsets_once, fill_offsets);
	*n = KGB_ARRAY_LEN(driver_syms);
	return driver_syms;
}

/* The NVML symbol table, in struct order. */
const kgb_cuda_sym_t *kgb_cuda_nvml_syms(size_t *n)
{
	pthread_once(&offsets_once, fill_offsets);
	*n = KGB_ARRAY_LEN(nvml_syms);
	return nvml_syms;
}

/* The NVRTC symbol table, in struct order. */
const kgb_cuda_sym_t *kgb_cuda_nvrtc_syms(size_t *n)
{
	pthread_once(&offsets_once, fill_offsets);
	*n = KGB_ARRAY_LEN(nvrtc_syms);
	return nvrtc_syms;
}

/* Fill api from lib, trying each entry's symbol then its fallback. */
int kgb_cuda_resolve(void *lib, const kgb_cuda_sym_t *syms, size_t n, void *api, char *err,
                     size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		void *p = dlsym(lib, syms[i].symbol);
		if (!p && syms[i].fallback[0])
			p = dlsym(lib, syms[i].fallback);
		if (!p)
			return kgb_err(err, errlen, "symbol %s missing%s%s", syms[i].symbol,
			               syms[i].fallback[0] ? " (and " : "",
			               syms[i].fallback[0] ? syms[i].fallback : "");
		memcpy((char *)api + syms[i].offset, &p, sizeof p);
	}
	return 0;
}

static void *open_first(const char *env, const char *const *names, size_t nnames, char *why,
                        size_t whylen, const char **used)
{
	const char *over = getenv(env);
	char first_err[384] = "";
	if (over && *over) {
		void *h = dlopen(over, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			snprintf(why, whylen, "%s: %s", over, dlerror());
		*used = over;
		return h;
	}
	for (size_t i = 0; i < nnames; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (h) {
			*used = names[i];
			return h;
		}
		if (!first_err[0])
			snprintf(first_err, sizeof first_err, "%s: %s", names[i], dlerror());
	}
	snprintf(why, whylen, "%s", first_err);
	return NULL;
}

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* Load a library once (under load_lock): env's override or the first of names that
 * loads, its symbols s[0..n) resolved into api; *ok, or msg says why not: "no WHAT
 * (...)" when none loads, "WHAT path BAD: ..." when a symbol is missing. */
static void load_once(bool *tried, bool *ok, char *msg, size_t msglen, const char *env, const char *const *names,
                      size_t nnames, const kgb_cuda_sym_t *s, size_t n, void *api, const char *what, const char *bad)
{
	pthread_mutex_lock(&load_lock);
	if (!*tried) {
		*tried = true;
		const char *used = NULL;
		char e[400] = "";
		void *h = open_first(env, names, nnames, e, sizeof e, &used);
		char re[256];
		if (!h) {
			snprintf(msg, msglen, "no %s (%s)", what, e);
		} else if (kgb_cuda_resolve(h, s, n, api, re, sizeof re) < 0) {
			snprintf(msg, msglen, "%s %s %s: %s", what, used, bad, re);
			dlclose(h);
		} else {
			*ok = true;
		}
	}
	pthread_mutex_unlock(&load_lock);
}

static struct {
	bool tried;
	kgb_cuda_api_t api;
	bool ok;
	char why[512];
} drv;

/* Load libcuda.so.1 (once). */
const kgb_cuda_api_t *kgb_cuda_driver(char *why, size_t whylen)
{
	static const char *const names[] = { "libcuda.so.1" };
	size_t n;
	const kgb_cuda_sym_t *s = kgb_cuda_driver_syms(&n);
	load_once(&drv.tried, &drv.ok, drv.why, sizeof drv.why, "KGB_CUDA_DRIVER_LIB", names, 1, s, n, &drv.api,
	          "CUDA driver", "too old");
	return kgb_be_loaded(drv.ok, &drv.api, drv.why, why, whylen);
}

static struct {
	bool tried;
	kgb_nvrtc_api_t api;
	bool ok;
	char why[512];
} rtc;

/* Load NVRTC (once). */
const kgb_nvrtc_api_t *kgb_cuda_nvrtc(char *why, size_t whylen)
{
	static const char *const names[] = { "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
		                                 "/usr/local/cuda/lib64/libnvrtc.so.13",
		                                 "/usr/local/cuda/lib64/libnvrtc.so.12" };
	size_t n;
	const kgb_cuda_sym_t *s = kgb_cuda_nvrtc_syms(&n);
	load_once(&rtc.tried, &rtc.ok, rtc.why, sizeof rtc.why, "KGB_CUDA_NVRTC_LIB", names, KGB_ARRAY_LEN(names), s,
	          n, &rtc.api, "NVRTC", "unusable");
	return kgb_be_loaded(rtc.ok, &rtc.api, rtc.why, why, whylen);
}

static struct {
	bool tried;
	kgb_nvml_api_t api;
	bool ok;
	char why[512];
} nvml;

/* Load and initialise NVML (once). */
const kgb_nvml_api_t *kgb_cuda_nvml(char *why, size_t whylen)
{
	static const char *const names[] = { "libnvidia-ml.so.1" };
	pthread_mutex_lock(&load_lock);
	if (!nvml.tried) {
		nvml.tried = true;
		const char *used = NULL;
		char e[400] = "";
		void *h = open_first("KGB_CUDA_NVML_LIB", names, 1, e, sizeof e, &used);
		if (!h) {
			snprintf(nvml.why, sizeof nvml.why, "no NVML (%s)", e);
		} else {
			size_t n;
			const kgb_cuda_sym_t *s = kgb_cuda_nvml_syms(&n);
			char re[256];
			if (kgb_cuda_resolve(h, s, n, &nvml.api, re, sizeof re) < 0) {
				snprintf(nvml.why, sizeof nvml.why, "NVML %s unusable: %s", used, re);
				dlclose(h);
			} else if (nvml.api.nvmlInit() != NVML_SUCCESS) {
				snprintf(nvml.why, sizeof nvml.why, "NVML %s: nvmlInit failed", used);
			} else {
				nvml.ok = true;
			}
		}
	}
	pthread_mutex_unlock(&load_lock);
	return kgb_be_loaded(nvml.ok, &nvml.api, nvml.why, why, whylen);
}

/* Driver result -> KGB_BE_* code. */
int kgb_cuda_classify(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS:
		return KGB_BE_OK;
	case CUDA_ERROR_ILLEGAL_ADDRESS:
	case CUDA_ERROR_LAUNCH_FAILED:
	case CUDA_ERROR_ILLEGAL_INSTRUCTION:
	case CUDA_ERROR_HARDWARE_STACK_ERROR:
	case CUDA_ERROR_MISALIGNED_ADDRESS:
	case CUDA_ERROR_INVALID_ADDRESS_SPACE:
	case CUDA_ERROR_INVALID_PC:
	case CUDA_ERROR_ASSERT:
	case CUDA_ERROR_LAUNCH_TIMEOUT:
		return KGB_BE_FAULT;
	case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
	case CUDA_ERROR_INVALID_VALUE:
	case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
	case CUDA_ERROR_INVALID_CLUSTER_SIZE:
		return KGB_BE_RESOURCE;
	case CUDA_ERROR_INVALID_IMAGE:
	case CUDA_ERROR_INVALID_PTX:
	case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
	case CUDA_ERROR_NO_BINARY_FOR_GPU:
	case CUDA_ERROR_INVALID_SOURCE:
	case CUDA_ERROR_NOT_FOUND:
		return KGB_BE_COMPILE;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return KGB_BE_NOMEM;
	default:
		return KGB_BE_ERR;
	}
}

/* NVRTC compile of one translation unit (runs in whichever process calls it; the
 * backend calls it inside a sandboxed compile child). */
int kgb_cuda_nvrtc_compile(const char *src, const char *name, int arch, bool want_ptx,
                           const char *const *opts, int nopts, char **out, size_t *outlen,
                           char *log, size_t loglen)
{
	char why[512];
	const kgb_nvrtc_api_t *rt = kgb_cuda_nvrtc(why, sizeof why);
	nvrtcProgram prog = NULL;
	const char **all = NULL;
	char archopt[64];
	int rc = KGB_BE_ERR;

	*out = NULL;
	*outlen = 0;
	if (log && loglen)
		log[0] = 0;
	if (!rt) {
		snprintf(log, loglen, "%s", why);
		return KGB_BE_ERR;
	}
	/* compute_XX for PTX (portable to newer chips through the driver's JIT), sm_XX for a
	 * cubin of exactly this chip. Hopper's arch-specific features (wgmma, setmaxnreg)
	 * need the "a" variant; ask for it with the option --kgb-arch-specific. */
	bool arch_specific = false;
	for (int i = 0; i < nopts; i++)
		if (strcmp(opts[i], "--kgb-arch-specific") == 0)
			arch_specific = true;
	snprintf(archopt, sizeof archopt, "--gpu-architecture=%s_%d%s", want_ptx ? "compute" : "sm",
	         arch, arch_specific ? "a" : "");
	all = kgb_xcalloc((size_t)nopts + 4, sizeof *all);
	int na = 0;
	all[na++] = archopt;
	all[na++] = "--std=c++17";
	all[na++] = "-default-device";
	for (int i = 0; i < nopts; i++)
		if (strcmp(opts[i], "--kgb-arch-specific") != 0)
			all[na++] = opts[i];

	nvrtcResult r = rt->nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL);
	if (r != NVRTC_SUCCESS) {
		snprintf(log, loglen, "nvrtcCreateProgram: %s", rt->nvrtcGetErrorString(r));
		goto out;
	}
	r = rt->nvrtcCompileProgram(prog, na, all);
	size_t ln = 0;
	if (rt->nvrtcGetProgramLogSize(prog, &ln) == NVRTC_SUCCESS && ln > 1 && log && loglen) {
		char *l = kgb_xmalloc(ln + 1);
		if (rt->nvrtcGetProgramLog(prog, l) == NVRTC_SUCCESS) {
			l[ln] = 0;
			snprintf(log, loglen, "%s", l);
		}
		free(l);
	}
	if (r != NVRTC_SUCCESS) {
		if (log && loglen && !log[0])
			snprintf(log, loglen, "nvrtcCompileProgram: %s", rt->nvrtcGetErrorString(r));
		rc = KGB_BE_COMPILE;
		goto out;
	}
	size_t n = 0;
	r = want_ptx ? rt->nvrtcGetPTXSize(prog, &n) : rt->nvrtcGetCUBINSize(prog, &n);
	if (r != NVRTC_SUCCESS || n == 0) {
		snprintf(log, loglen, "nvrtc: no %s produced", want_ptx ? "PTX" : "cubin");
		goto out;
	}
	*out = kgb_xmalloc(n + 1);
	r = want_ptx ? rt->nvrtcGetPTX(prog, *out) : rt->nvrtcGetCUBIN(prog, *out);
	if (r != NVRTC_SUCCESS) {
		free(*out);
		*out = NULL;
		snprintf(log, loglen, "nvrtc: %s", rt->nvrtcGetErrorString(r));
		goto out;
	}
	(*out)[n] = 0;
	*outlen = n;
	rc = KGB_BE_OK;
out:
	if (prog)
		rt->nvrtcDestroyProgram(&prog);
	free(all);
	return rc;
}

/* ---- module globals and the scrub kernel (cuda.c's scrub_local) ---- */

/* The section named by sh's sh_name in the string table strs (bounded), or "". */
static const char *elf_str(const uint8_t *p, size_t len, const Elf64_Shdr *strs, uint32_t off)
{
	if (strs->sh_offset > len || strs->sh_size > len - strs->sh_offset || off >= strs->sh_size)
		return "";
	const char *s = (const char *)p + strs->sh_offset + off;
	return memchr(s, 0, strs->sh_size - off) ? s : "";
}

static size_t cubin_globals(const uint8_t *p, size_t len, char (*names)[KGB_CUDA_NAME_MAX], size_t max)
{
	Elf64_Ehdr eh;
	size_t n = 0;
	if (len < sizeof eh)
		return 0;
	memcpy(&eh, p, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > len ||
	    eh.e_shnum > (len - eh.e_shoff) / sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum)
		return 0;
	Elf64_Shdr *sh = kgb_xcalloc(eh.e_shnum ? eh.e_shnum : 1, sizeof *sh);
	memcpy(sh, p + eh.e_shoff, (size_t)eh.e_shnum * sizeof *sh);
	for (size_t i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh.e_shnum || sh[i].sh_offset > len ||
		    sh[i].sh_size > len - sh[i].sh_offset)
			continue;
		for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym) && n < max; k++) {
			Elf64_Sym sym;
			memcpy(&sym, p + sh[i].sh_offset + k * sizeof sym, sizeof sym);
			if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_shndx == SHN_UNDEF ||
			    sym.st_shndx >= eh.e_shnum)
				continue;
			if (strncmp(elf_str(p, len, &sh[eh.e_shstrndx], sh[sym.st_shndx].sh_name), ".nv.global", 10) != 0)
				continue;
			const char *name = elf_str(p, len, &sh[sh[i].sh_link], sym.st_name);
			if (*name && strlen(name) < KGB_CUDA_NAME_MAX)
				snprintf(names[n++], KGB_CUDA_NAME_MAX, "%s", name);
		}
	}
	free(sh);
	return n;
}

static size_t ptx_globals(const char *s, size_t len, char (*names)[KGB_CUDA_NAME_MAX], size_t max)
{
	size_t n = 0;
	int depth = 0;
	for (size_t i = 0; i < len && s[i] && n < max;) {
		size_t e = i;
		while (e < len && s[e] && s[e] != '\n')
			e++;
		/* a module-scope line "[.visible|.weak] .global [.align N] .TYPE NAME[N] [= ...];" */
		char line[512];
		size_t l = KGB_MIN(e - i, sizeof line - 1);
		memcpy(line, s + i, l);
		line[l] = 0;
		char *cut = strstr(line, "//");
		if (cut)
			*cut = 0;
		if (depth == 0 && strstr(line, ".global") && !strstr(line, ".extern")) {
			char *end = line + strcspn(line, "[=;");
			while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
				end--;
			*end = 0;
			char *name = strrchr(line, ' ');
			char *tab = strrchr(line, '\t');
			if (tab && (!name || tab > name))
				name = tab;
			name = name ? name + 1 : line;
			size_t nl = strlen(name);
			if (*name && *name != '.' && nl < KGB_CUDA_NAME_MAX) {
				memcpy(names[n], name, nl + 1);
				n++;
			}
		}
		for (size_t k = i; k < e; k++)
			depth += s[k] == '{' ? 1 : s[k] == '}' ? -1 : 0;
		i = e < len && s[e] ? e + 1 : e;
	}
	return n;
}

size_t kgb_cuda_global_names(const void *image, size_t len, char (*names)[KGB_CUDA_NAME_MAX], size_t max)
{
	const uint8_t *p = image;
	if (!p || len < 4)
		return 0;
	if (memcmp(p, ELFMAG, SELFMAG) == 0)
		return cubin_globals(p, len, names, max);
	return ptx_globals(image, len, names, max);
}

/* kgb_scrub_shared(u32 words, u32 salt): block b writes word i of its dynamic shared
 * memory with salt ^ (b * 0x9E3779B1) ^ i, volatile so that no store is dropped.
 * Written for sm_50 so that every driver's JIT takes it. */
static const char scrub_ptx[] =
	".version 6.0\n"
	".target sm_50\n"
	".address_size 64\n"
	".extern .shared .align 16 .b8 kgb_scrub_smem[];\n"
	".visible .entry kgb_scrub_shared(.param .u32 words, .param .u32 salt)\n"
	"{\n"
	"  .reg .pred %p<2>;\n"
	"  .reg .b32 %r<10>;\n"
	"  ld.param.u32 %r1, [words];\n"
	"  ld.param.u32 %r2, [salt];\n"
	"  mov.u32 %r3, %ctaid.x;\n"
	"  mul.lo.u32 %r3, %r3, 0x9E3779B1;\n"
	"  xor.b32 %r2, %r2, %r3;\n"
	"  mov.u32 %r4, %tid.x;\n"
	"  mov.u32 %r5, %ntid.x;\n"
	"  mov.u32 %r6, kgb_scrub_smem;\n"
	"LOOP:\n"
	"  setp.ge.u32 %p1, %r4, %r1;\n"
	"  @%p1 bra DONE;\n"
	"  xor.b32 %r7, %r2, %r4;\n"
	"  shl.b32 %r8, %r4, 2;\n"
	"  add.u32 %r9, %r6, %r8;\n"
	"  st.volatile.shared.u32 [%r9], %r7;\n"
	"  add.u32 %r4, %r4, %r5;\n"
	"  bra LOOP;\n"
	"DONE:\n"
	"  ret;\n"
	"}\n";

const char *kgb_cuda_scrub_ptx(void)
{
	return scrub_ptx;
}

/* One thread spins until word[0] reaches token (as a wrapping counter) or timeout_ns
 * of the device's global timer have passed; on a time-out it adds one to word[2 + k].
 * word is host memory mapped for the device, written by the host (cuda.c, the gate). */
static const char gate_ptx[] =
	".version 6.0\n"
	".target sm_50\n"
	".address_size 64\n"
	".visible .entry kgb_gate(.param .u64 word, .param .u32 token, .param .u64 timeout_ns, .param .u32 k)\n"
	"{\n"
	"  .reg .pred %p<3>;\n"
	"  .reg .b32 %r<6>;\n"
	"  .reg .b64 %rd<9>;\n"
	"  ld.param.u64 %rd1, [word];\n"
	"  ld.param.u32 %r1, [token];\n"
	"  ld.param.u64 %rd2, [timeout_ns];\n"
	"  ld.param.u32 %r5, [k];\n"
	"  cvta.to.global.u64 %rd3, %rd1;\n"
	"  mov.u64 %rd4, %globaltimer;\n"
	"WAIT:\n"
	"  ld.volatile.global.u32 %r2, [%rd3];\n"
	"  sub.u32 %r3, %r2, %r1;\n"
	"  setp.ge.s32 %p1, %r3, 0;\n"
	"  @%p1 bra DONE;\n"
	"  mov.u64 %rd5, %globaltimer;\n"
	"  sub.u64 %rd6, %rd5, %rd4;\n"
	"  setp.lt.u64 %p2, %rd6, %rd2;\n"
	"  @%p2 bra WAIT;\n"
	"  add.u32 %r5, %r5, 2;\n"
	"  mul.wide.u32 %rd7, %r5, 4;\n"
	"  add.u64 %rd8, %rd3, %rd7;\n"
	"  ld.volatile.global.u32 %r4, [%rd8];\n"
	"  add.u32 %r4, %r4, 1;\n"
	"  st.volatile.global.u32 [%rd8], %r4;\n"
	"DONE:\n"
	"  ret;\n"
	"}\n";

const char *kgb_cuda_gate_ptx(void)
{
	return gate_ptx;
}
