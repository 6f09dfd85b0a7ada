/* Prompts and answers of kgb generate: see genprompt.h. */
#include "genprompt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "dtype.h"
#include "util.h"

static const char *const format_names[] = {"opencl", "cuda", "python"};

int kgb_gen_format_parse(const char *name)
{
	for (size_t i = 0; i < KGB_ARRAY_LEN(format_names); i++)
		if (strcmp(name, format_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *kgb_gen_format_name(kgb_gen_format_t f)
{
	return format_names[f];
}

/* ---- built-in templates ---- */

static const char t_system[] =
	"You are an expert GPU kernel engineer. You write kernels that are correct for every\n"
	"input the operator's signature allows (any shape, stride and dtype listed) and as fast\n"
	"as the hardware permits. You answer with code in fenced blocks exactly as asked, and\n"
	"nothing the answer format does not ask for.\n";

static const char t_user[] =
	"Write a kernel implementation of one operator.\n"
	"\n"
	"Operator: {{op}}\n"
	"Source: {{source}}\n"
	"Semantics: {{summary}}\n"
	"Signature: {{signature}}\n"
	"Overloads: {{overloads}}\n"
	"\n"
	"Tensors (over all test cases):\n"
	"{{tensors}}\n"
	"\n"
	"Test cases: {{cases}}\n"
	"\n"
	"Platform: {{platform}}\n"
	"\n"
	"{{format}}\n"
	"{{reflection}}";

static const char t_format_plan[] =
	"Answer format: a kgb launch plan and its {{language}} kernels.\n"
	"The plan is JSON: {\"kernels\": [{\"entry\": NAME, \"lang\": \"{{lang}}\", \"source\": FILE,\n"
	"\"grid\": [EXPR...], \"block\": [EXPR...], \"args\": [...]}]}. grid counts blocks\n"
	"(work-groups) per dimension, block counts threads per block. An argument is\n"
	"{\"tensor\": NAME} for a tensor of the signature, or {\"scalar\": EXPR, \"type\": \"i32\"|\"f32\"}\n"
	"(type defaults to i32). Expressions are integer arithmetic over the case's symbols:\n"
	"NAME.numel, NAME.ndim, NAME.size0.., NAME.stride0.., NAME.rows, NAME.cols, the scalars\n"
	"and grid parameters by name, with cdiv(a, b), min, max and next_pow2. A kernel may\n"
	"also take compile-time \"defines\" ({NAME: VALUE}, passed as -D), and the plan may declare \"scratch\"\n"
	"buffers ([{\"name\": N, \"bytes\": EXPR}], passed as {\"scratch\": N}).\n"
	"{{language_notes}}\n"
	"Give the plan in one ```json block, then each kernel file in its own block whose info\n"
	"string is the language and the file name, for example:\n"
	"```json\n"
	"{\"kernels\": [{\"entry\": \"k\", \"lang\": \"{{lang}}\", \"source\": \"{{op}}.{{ext}}\", ...}]}\n"
	"```\n"
	"```{{lang}} {{op}}.{{ext}}\n"
	"...\n"
	"```\n";

static const char t_format_python[] =
	"Answer format: one Python module in KernelGenBench's format, in a single ```python\n"
	"block. The module defines Triton kernels (@triton.jit) and, for every overload above,\n"
	"the wrapper KernelGenBench calls for it (named after the overload: the operator's name\n"
	"for the default overload, else NAME_OVERLOAD, and NAME_out for out= forms). A wrapper\n"
	"takes the overload's arguments as torch tensors and scalars, allocates its outputs with\n"
	"torch, launches its kernels and returns the result. It must not compute the result with\n"
	"torch operations, read device data on the host, or keep state between calls.\n";

static const char t_reflection[] =
	"\n"
	"Your previous answer for this operator (round {{previous_round}}) did not pass:\n"
	"{{failures}}\n"
	"\n"
	"Previous answer:\n"
	"{{previous}}\n"
	"Correct it. Answer in the same format, with the whole candidate again.\n";

static const char *const opencl_notes =
	"OpenCL C 1.2. Before your source kgb defines, for every tensor NAME of the case,\n"
	"T_NAME (its storage type), LOAD_NAME(p, i) (element i as float for float dtypes) and\n"
	"STORE_NAME(p, i, v), so one source serves every dtype; fp16 needs no extension through\n"
	"them. Pointers are __global; sizes are passed as scalar arguments.";
static const char *const cuda_notes =
	"CUDA C++ compiled with NVRTC (no host code, no includes beyond the CUDA headers);\n"
	"declare kernels extern \"C\" __global__ so the entry name is the plan's.";

static const char *builtin(int which, kgb_gen_format_t f)
{
	switch (which) {
	case KGB_GEN_T_SYSTEM:
		return t_system;
	case KGB_GEN_T_USER:
		return t_user;
	case KGB_GEN_T_FORMAT:
		return f == KGB_GEN_PYTHON ? t_format_python : t_format_plan;
	default:
		return t_reflection;
	}
}

static char *file_name(int which, kgb_gen_format_t f)
{
	static const char *const base[] = {"system.txt", "user.txt", NULL, "reflection.txt"};
	return which == KGB_GEN_T_FORMAT ? kgb_xasprintf("format-%s.txt", format_names[f]) : kgb_xstrdup(base[which]);
}

int kgb_gen_templates_load(const char *dir, kgb_gen_format_t f, kgb_gen_templates_t *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	for (int i = 0; i < KGB_GEN_NT; i++) {
		char *name = file_name(i, f);
		char *path = dir ? kgb_xasprintf("%s/%s", dir, name) : NULL;
		struct stat st;
		if (path && stat(path, &st) == 0) {
			char rerr[256];
			size_t len;
			t->text[i] = kgb_read_regular_file(path, 1 << 20, &len, rerr, sizeof rerr);
			if (!t->text[i]) {
				kgb_err(err, errlen, "template %s: %s", path, rerr);
				free(name);
				free(path);
				kgb_gen_templates_release(t);
				return -1;
			}
			t->origin[i] = path;
			path = NULL;
		} else {
			t->text[i] = kgb_xstrdup(builtin(i, f));
			t->origin[i] = kgb_xasprintf("built-in %s", name);
		}
		free(name);
		free(path);
	}
	return 0;
}

void kgb_gen_templates_release(kgb_gen_templates_t *t)
{
	for (int i = 0; i < KGB_GEN_NT; i++) {
		free(t->text[i]);
		free(t->origin[i]);
		t->text[i] = t->origin[i] = NULL;
	}
}

int kgb_gen_templates_dump(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return kgb_err(err, errlen, "%s: cannot make the directory: %s", dir, strerror(errno));
	for (int f = 0; f < (int)KGB_ARRAY_LEN(format_names); f++)
		for (int i = 0; i < KGB_GEN_NT; i++) {
			if (f > 0 && i != KGB_GEN_T_FORMAT)
				continue;
			char *name = file_name(i, (kgb_gen_format_t)f);
			char *path = kgb_xasprintf("%s/%s", dir, name);
			free(name);
			FILE *fp = fopen(path, "wx");
			if (!fp) {
				int e = errno;
				kgb_err(err, errlen, "%s: %s", path, e == EEXIST ? "exists (left as it is)" : strerror(e));
				free(path);
				return -1;
			}
			fputs(builtin(i, (kgb_gen_format_t)f), fp);
			if (fclose(fp) != 0) {
				kgb_err(err, errlen, "%s: cannot write: %s", path, strerror(errno));
				free(path);
				return -1;
			}
			free(path);
		}
	return 0;
}

char *kgb_gen_render(const char *tmpl, const char *origin, const char *const *vars, char *err, size_t errlen)
{
	size_t cap = strlen(tmpl) + 256, len = 0;
	char *out = kgb_xmalloc(cap);
	const char *p = tmpl;
	while (*p) {
		const char *open = strstr(p, "{{");
		size_t lit = open ? (size_t)(open - p) : strlen(p);
		const char *val = NULL;
		size_t vlen = 0;
		const char *close = open ? strstr(open + 2, "}}") : NULL;
		if (open && close) {
			size_t nl = (size_t)(close - open - 2);
			for (size_t i = 0; vars[i]; i += 2)
				if (strlen(vars[i]) == nl && strncmp(vars[i], open + 2, nl) == 0) {
					val = vars[i + 1] ? vars[i + 1] : "";
					break;
				}
			if (!val) {
				kgb_err(err, errlen, "%s: unknown template variable {{%.*s}}", origin, (int)KGB_MIN(nl, 60),
				        open + 2);
				free(out);
				return NULL;
			}
			vlen = strlen(val);
		} else if (open) {
			lit += 2; /* a lone "{{" is text */
		}
		if (len + lit + vlen + 1 > cap) {
			cap = (len + lit + vlen + 1) * 2;
			out = kgb_xrealloc(out, cap);
		}
		memcpy(out + len, p, lit);
		len += lit;
		if (val) {
			memcpy(out + len, val, vlen);
			len += vlen;
			p = close + 2;
		} else {
			p += lit;
		}
	}
	out[len] = '\0';
	return out;
}

/* ---- the operator ---- */

typedef struct tdesc {
	char name[48];
	int role;                 /* kgb_role_t; -1: a scalar */
	unsigned dtypes;
	int min_rank, max_rank;
} tdesc_t;

static const char *role_name(int r)
{
	static const char *const n[] = {"input", "output", "input and output", "scratch"};
	return r < 0 ? "scalar" : (r < (int)KGB_ARRAY_LEN(n) ? n[r] : "tensor");
}

static void appendf(char **s, const char *fmt, const char *a, const char *b)
{
	char *t = kgb_xasprintf(fmt, *s ? *s : "", a, b);
	free(*s);
	*s = t;
}

int kgb_gen_describe_op(const kgb_op_t *op, bool smoke, kgb_gen_opdesc_t *d, char *err, size_t errlen)
{
	memset(d, 0, sizeof *d);
	const char *names[KGB_MAX_OVERLOADS];
	uint32_t counts[KGB_MAX_OVERLOADS];
	int no = kgb_op_overloads(op, names, counts);
	for (int i = 0; i < no; i++) {
		char one[160];
		snprintf(one, sizeof one, "%s.%s (%u cases)", op->name, names[i], counts[i]);
		appendf(&d->overloads, "%s%s%s", i ? ", " : "", one);
	}
	if (!d->overloads)
		d->overloads = kgb_xasprintf("one (%s)", op->name);
	uint32_t nc = smoke ? kgb_op_smoke_case_count(op) : kgb_op_case_count(op);
	/* at most 2000 cases are looked at, evenly spread, for the tensors' dtypes and ranks */
	uint32_t step = nc > 2000 ? nc / 2000 : 1;
	tdesc_t td[KGB_MAX_TENSORS + KGB_MAX_SCALARS];
	size_t nt = 0;
	for (uint32_t i = 0; i < nc; i += step) {
		kgb_case_t c;
		if (kgb_case_build(op, i, &c, err, errlen) != 0) {
			kgb_gen_opdesc_release(d);
			return -1;
		}
		for (int k = 0; k < c.ntensors + c.nscalars; k++) {
			bool is_t = k < c.ntensors;
			const char *nm = is_t ? c.t[k].name : c.s[k - c.ntensors].name;
			size_t j = 0;
			while (j < nt && strcmp(td[j].name, nm) != 0)
				j++;
			if (j == nt) {
				if (nt == KGB_ARRAY_LEN(td))
					continue;
				memset(&td[nt], 0, sizeof td[nt]);
				snprintf(td[nt].name, sizeof td[nt].name, "%s", nm);
				td[nt].role = is_t ? (int)c.t[k].role : -1;
				td[nt].min_rank = 99;
				nt++;
			}
			if (is_t) {
				td[j].dtypes |= 1u << c.t[k].dtype;
				td[j].min_rank = KGB_MIN(td[j].min_rank, c.t[k].ndim);
				td[j].max_rank = KGB_MAX(td[j].max_rank, c.t[k].ndim);
			} else {
				td[j].dtypes |= 1u << c.s[k - c.ntensors].dtype;
			}
		}
		kgb_case_release(&c);
	}
	for (size_t j = 0; j < nt; j++) {
		char dts[160] = "", line[1800];
		for (unsigned b = 0; b < 32; b++)
			if (td[j].dtypes & (1u << b)) {
				size_t k = strlen(dts);
				snprintf(dts + k, sizeof dts - k, "%s%s", k ? "," : "", kgb_dtype_name((kgb_dtype_t)b));
			}
		if (td[j].role < 0)
			snprintf(line, sizeof line, "- %s: scalar %s", td[j].name, dts);
		else if (td[j].min_rank == td[j].max_rank)
			snprintf(line, sizeof line, "- %s: %s, %s, rank %d", td[j].name, role_name(td[j].role), dts,
			         td[j].min_rank);
		else
			snprintf(line, sizeof line, "- %s: %s, %s, rank %d to %d", td[j].name, role_name(td[j].role), dts,
			         td[j].min_rank, td[j].max_rank);
		appendf(&d->tensors, "%s%s%s", j ? "\n" : "", line);
	}
	if (!d->tensors)
		d->tensors = kgb_xstrdup("(none)");
	/* a handful of cases, evenly spread, say what the grid looks like */
	char head[96];
	snprintf(head, sizeof head, "%u cases, for example:", nc);
	d->cases = kgb_xstrdup(head);
	uint32_t show = KGB_MIN(nc, 6u);
	for (uint32_t k = 0; k < show; k++) {
		uint32_t i = show > 1 ? (uint32_t)((uint64_t)k * (nc - 1) / (show - 1)) : 0;
		char label[400], line[460];
		if (kgb_case_label(op, i, label, sizeof label) != 0)
			continue;
		snprintf(line, sizeof line, "\n- case %u: %s", i, label);
		appendf(&d->cases, "%s%s%s", line, "");
	}
	return 0;
}

void kgb_gen_opdesc_release(kgb_gen_opdesc_t *d)
{
	free(d->overloads);
	free(d->tensors);
	free(d->cases);
	memset(d, 0, sizeof *d);
}

/* ---- answers ---- */

typedef struct block {
	char *info;               /* the info string, trimmed */
	char *text;
	char *before;             /* the last non-empty line before the fence */
} block_t;

static char *trimmed(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	return kgb_xasprintf("%.*s", (int)n, s);
}

/* The fenced blocks of text (``` or ~~~, three or more, up to three spaces in). */
static block_t *parse_blocks(const char *text, size_t *nb)
{
	block_t *b = NULL;
	size_t n = 0;
	const char *p = text, *prev = NULL;
	size_t prevlen = 0;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t ll = eol ? (size_t)(eol - p) : strlen(p);
		const char *q = p;
		int ind = 0;
		while (ind < 3 && *q == ' ')
			q++, ind++;
		char fc = *q;
		size_t fl = 0;
		while ((fc == '`' || fc == '~') && q[fl] == fc)
			fl++;
		if (fl >= 3) {
			b = kgb_xrealloc(b, (n + 1) * sizeof *b);
			block_t *cb = &b[n++];
			cb->info = trimmed(q + fl, ll - (size_t)(q - p) - fl);
			cb->before = prev ? trimmed(prev, prevlen) : kgb_xstrdup("");
			const char *body = eol ? eol + 1 : p + ll;
			const char *r = body, *end = NULL;
			while (*r) {
				const char *e2 = strchr(r, '\n');
				size_t l2 = e2 ? (size_t)(e2 - r) : strlen(r);
				const char *s2 = r;
				int i2 = 0;
				while (i2 < 3 && *s2 == ' ')
					s2++, i2++;
				size_t f2 = 0;
				while (s2[f2] == fc)
					f2++;
				bool only = true;
				for (size_t k = (size_t)(s2 - r) + f2; k < l2; k++)
					only &= r[k] == ' ' || r[k] == '\t' || r[k] == '\r';
				if (f2 >= fl && only) {
					end = r;
					break;
				}
				r = e2 ? e2 + 1 : r + l2;
			}
			/* a block the answer's end cut off runs to the end */
			size_t bl = end ? (size_t)(end - body) : strlen(body);
			cb->text = kgb_xasprintf("%.*s", (int)bl, body);
			if (!end)
				break;
			const char *e3 = strchr(end, '\n');
			p = e3 ? e3 + 1 : end + strlen(end);
			prev = NULL;
			continue;
		}
		if (ll > 0 && strspn(p, " \t\r") < ll) {
			prev = p;
			prevlen = ll;
		}
		p = eol ? eol + 1 : p + ll;
	}
	*nb = n;
	return b;
}

static void free_blocks(block_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(b[i].info);
		free(b[i].text);
		free(b[i].before);
	}
	free(b);
}

/* The info string's first word (the language), lowercased, into out. */
static void info_lang(const char *info, char *out, size_t n)
{
	size_t k = 0;
	while (info[k] && info[k] != ' ' && info[k] != '\t' && info[k] != '{' && k + 1 < n) {
		out[k] = (char)(info[k] >= 'A' && info[k] <= 'Z' ? info[k] + 32 : info[k]);
		k++;
	}
	out[k] = '\0';
}

/* True if the word name appears in s, delimited by characters that cannot be part of
 * a file name. */
static bool names_file(const char *s, const char *name)
{
	size_t nl = strlen(name);
	for (const char *h = strstr(s, name); h; h = strstr(h + 1, name)) {
		char a = h == s ? ' ' : h[-1], z = h[nl];
		bool la = !(a == '.' || a == '_' || a == '-' || a == '/' || (a >= '0' && a <= '9') ||
		            (a >= 'a' && a <= 'z') || (a >= 'A' && a <= 'Z'));
		bool lz = !(z == '_' || z == '-' || (z >= '0' && z <= '9') || (z >= 'a' && z <= 'z') ||
		            (z >= 'A' && z <= 'Z') || (z == '.' && h[nl + 1] && h[nl + 1] != ' '));
		if (la && lz)
			return true;
	}
	return false;
}

json_t *kgb_gen_extract(kgb_gen_format_t f, const char *content, char *err, size_t errlen)
{
	size_t nb = 0;
	block_t *b = parse_blocks(content ? content : "", &nb);
	json_t *files = json_object(), *out = NULL;
	char lang[32];
	if (nb == 0) {
		kgb_err(err, errlen, "the answer has no fenced code block");
		goto out;
	}
	if (f == KGB_GEN_PYTHON) {
		ssize_t pick = -1, plain = -1;
		for (size_t i = 0; i < nb; i++) {
			info_lang(b[i].info, lang, sizeof lang);
			if (strcmp(lang, "python") == 0 || strcmp(lang, "py") == 0 || strcmp(lang, "python3") == 0)
				pick = (ssize_t)i;
			else if (!lang[0])
				plain = (ssize_t)i;
		}
		if (pick < 0)
			pick = plain;
		if (pick < 0) {
			kgb_err(err, errlen, "the answer has no ```python block (%zu other blocks)", nb);
			goto out;
		}
		json_object_set_new(files, "module.py", json_string(b[pick].text));
		out = json_pack("{s:O}", "files", files);
		goto out;
	}
	/* the plan: the last json block that parses as an object with kernels */
	json_t *plan = NULL;
	ssize_t pi = -1;
	char perr[200] = "";
	for (size_t i = nb; i-- > 0 && !plan;) {
		info_lang(b[i].info, lang, sizeof lang);
		bool jsonish = strcmp(lang, "json") == 0 || (!lang[0] && b[i].text[strspn(b[i].text, " \t\r\n")] == '{');
		if (!jsonish)
			continue;
		json_error_t je;
		json_t *j = json_loads(b[i].text, 0, &je);
		if (json_is_object(j) && json_is_array(json_object_get(j, "kernels"))) {
			plan = j;
			pi = (ssize_t)i;
		} else {
			if (!perr[0])
				snprintf(perr, sizeof perr, ": the json block %s", j ? "has no \"kernels\" array" : je.text);
			json_decref(j);
		}
	}
	if (!plan) {
		kgb_err(err, errlen, "the answer has no ```json block holding a launch plan%s", perr);
		goto out;
	}
	char *ptext = json_dumps(plan, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_object_set_new(files, "plan.json", json_string(ptext));
	free(ptext);
	json_t *ks = json_object_get(plan, "kernels");
	size_t nsrc = 0, ncode = 0;
	ssize_t lone = -1;
	for (size_t i = 0; i < nb; i++)
		if ((ssize_t)i != pi) {
			info_lang(b[i].info, lang, sizeof lang);
			if (strcmp(lang, "json") != 0) {
				ncode++;
				lone = (ssize_t)i;
			}
		}
	for (size_t k = 0; k < json_array_size(ks); k++) {
		const char *src = json_string_value(json_object_get(json_array_get(ks, k), "source"));
		if (src && !json_object_get(files, src))
			nsrc++;
		if (src && !json_object_get(files, src))
			json_object_set_new(files, src, json_null());
	}
	const char *key;
	json_t *val;
	void *tmp;
	json_object_foreach_safe(files, tmp, key, val)
	{
		if (!json_is_null(val))
			continue;
		ssize_t hit = -1;
		for (size_t i = nb; i-- > 0 && hit < 0;)
			if ((ssize_t)i != pi && names_file(b[i].info, key))
				hit = (ssize_t)i;
		for (size_t i = nb; i-- > 0 && hit < 0;)
			if ((ssize_t)i != pi && names_file(b[i].before, key))
				hit = (ssize_t)i;
		if (hit < 0 && nsrc == 1 && ncode == 1)
			hit = lone;
		if (hit < 0) {
			kgb_err(err, errlen, "the plan names kernel source '%s', but no code block of the answer is named %s",
			        key, key);
			json_decref(plan);
			goto out;
		}
		json_object_set_new(files, key, json_string(b[hit].text));
	}
	if (nsrc == 0 && json_array_size(ks) > 0) {
		kgb_err(err, errlen, "the plan's kernels name no \"source\" file");
		json_decref(plan);
		goto out;
	}
	json_decref(plan);
	out = json_pack("{s:O}", "files", files);
out:
	json_decref(files);
	free_blocks(b, nb);
	return out;
}

char *kgb_gen_files_text(kgb_gen_format_t f, json_t *code)
{
	json_t *files = json_object_get(code, "files");
	char *s = kgb_xstrdup("");
	const char *key;
	json_t *val;
	const char *lang = f == KGB_GEN_PYTHON ? "python" : f == KGB_GEN_CUDA ? "cuda" : "opencl";
	json_t *plan = json_object_get(files, "plan.json");
	if (plan) {
		char *t = kgb_xasprintf("%s```json\n%s\n```\n", s, json_string_value(plan));
		free(s);
		s = t;
	}
	json_object_foreach(files, key, val)
	{
		if (strcmp(key, "plan.json") == 0 || !json_is_string(val))
			continue;
		const char *txt = json_string_value(val);
		size_t l = strlen(txt);
		char *t = kgb_xasprintf("%s```%s%s%s\n%s%s```\n", s, lang, f == KGB_GEN_PYTHON ? "" : " ",
		                        f == KGB_GEN_PYTHON ? "" : key, txt, l && txt[l - 1] == '\n' ? "" : "\n");
		free(s);
		s = t;
	}
	return s;
}

const char *kgb_gen_language_notes(kgb_gen_format_t f)
{
	return f == KGB_GEN_CUDA ? cuda_notes : f == KGB_GEN_OPENCL ? opencl_notes : "";
}
