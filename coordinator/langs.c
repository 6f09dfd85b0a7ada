/* Languages per backend; see langs.h. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "langs.h"
#include "plan.h"
#include "util.h"

#define L(x) (1u << KGB_LANG_##x)

static const struct {
	const char *backend;
	unsigned langs;
} TABLE[] = {
	{ "opencl", L(OPENCL) },
	{ "cuda", L(CUDA) | L(TRITON) | L(PTX) | L(CUBIN) },
	{ "hip", L(HIP) | L(HSACO) },
	{ "level-zero", L(SPIRV) },
};

unsigned kgb_coord_backend_langs(const char *backend)
{
	for (size_t i = 0; backend && i < KGB_ARRAY_LEN(TABLE); i++)
		if (strcmp(TABLE[i].backend, backend) == 0)
			return TABLE[i].langs;
	return 0;
}

unsigned kgb_coord_langs_parse(const char *csv)
{
	unsigned m = 0;
	while (csv && *csv) {
		const char *e = strchr(csv, ',');
		size_t n = e ? (size_t)(e - csv) : strlen(csv);
		char name[32];
		if (n < sizeof name) {
			kgb_lang_t l;
			memcpy(name, csv, n);
			name[n] = 0;
			if (strcmp(name, "python") == 0)
				m |= KGB_COORD_LANG_PYTHON;
			else if (kgb_lang_parse(name, &l) == 0)
				m |= 1u << l;
		}
		csv = e ? e + 1 : csv + n;
	}
	return m;
}

unsigned kgb_coord_plan_langs(const json_t *plan)
{
	unsigned m = 0;
	size_t i;
	json_t *k;
	const char *kind = json_string_value(json_object_get(plan, "kind"));
	if (kind && strcmp(kind, "python") == 0)
		m |= KGB_COORD_LANG_PYTHON;
	json_array_foreach(json_object_get(plan, "kernels"), i, k) {
		kgb_lang_t l;
		if (kgb_lang_parse(json_string_value(json_object_get(k, "lang")), &l) == 0)
			m |= 1u << l;
	}
	return m;
}

int kgb_coord_platform_runs(const char *backend, unsigned langs)
{
	unsigned runs = kgb_coord_backend_langs(backend);
	langs &= ~KGB_COORD_LANG_PYTHON;
	return !langs || !runs || !(langs & ~runs);
}

char *kgb_coord_langs_names(unsigned langs, char *buf, size_t n)
{
	size_t used = 0;
	buf[0] = 0;
	for (int l = 0; l < KGB_LANG__COUNT; l++)
		if (langs & (1u << l) && used < n)
			used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? "," : "", kgb_lang_name((kgb_lang_t)l));
	return buf;
}
