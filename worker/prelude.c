/* The OpenCL prelude. Candidates index tensors of any dtype through the same three
 * macros, so one kernel text serves every dtype of an operator's cases. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prelude.h"
#include "util.h"

static const char prelude_head[] =
	"/* kgb prelude */\n"
	"#ifdef cl_khr_fp64\n"
	"#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
	"#endif\n"
	"static inline float kgb_bf16_to_float(ushort h) { return as_float(((uint)h) << 16); }\n"
	"static inline ushort kgb_float_to_bf16(float f)\n"
	"{\n"
	"\tuint u = as_uint(f);\n"
	"\tif ((u & 0x7fffffffu) > 0x7f800000u)\n"
	"\t\treturn (ushort)((u >> 16) | 0x0040u);\n"
	"\tu += 0x7fffu + ((u >> 16) & 1u);\n"
	"\treturn (ushort)(u >> 16);\n"
	"}\n";

/* The strided-iteration helpers (docs/candidate-format.md, "Strided helpers"): compiled
 * only when the plan defines KGB_STRIDED, so they never clash with a candidate's own
 * names otherwise. */
static const char prelude_strided[] =
	"#ifdef KGB_STRIDED\n"
	"#ifdef cl_khr_fp64\n"
	"typedef double kgb_acc_t;\n"
	"#else\n"
	"typedef float kgb_acc_t;\n"
	"#endif\n"
	"#define KGB_KD 6\n"
	"#define KGB_DIMS(p) int p##0, int p##1, int p##2, int p##3, int p##4, int p##5\n"
	"#define KGB_ARR(p) { p##0, p##1, p##2, p##3, p##4, p##5 }\n"
	"typedef struct {\n"
	"\tint nd;\n"
	"\tint n[KGB_KD];\n"
	"\tint s[3][KGB_KD];\n"
	"\tint id[KGB_KD];\n"
	"\tlong off[3];\n"
	"} kgb_it_t;\n"
	"static void kgb_it_init(kgb_it_t *it, const int *n, const int *s0, const int *s1, const int *s2)\n"
	"{\n"
	"\tit->nd = 0;\n"
	"\tfor (int d = 0; d < KGB_KD; d++) {\n"
	"\t\tif (n[d] == 1)\n"
	"\t\t\tcontinue;\n"
	"\t\tint k = it->nd++;\n"
	"\t\tit->n[k] = n[d];\n"
	"\t\tit->s[0][k] = s0[d];\n"
	"\t\tit->s[1][k] = s1[d];\n"
	"\t\tit->s[2][k] = s2[d];\n"
	"\t}\n"
	"}\n"
	"static void kgb_it_seek(kgb_it_t *it, long i)\n"
	"{\n"
	"\tit->off[0] = it->off[1] = it->off[2] = 0;\n"
	"\tfor (int k = it->nd - 1; k >= 0; k--) {\n"
	"\t\tint q = (int)(i % it->n[k]);\n"
	"\t\ti /= it->n[k];\n"
	"\t\tit->id[k] = q;\n"
	"\t\tfor (int t = 0; t < 3; t++)\n"
	"\t\t\tit->off[t] += (long)q * it->s[t][k];\n"
	"\t}\n"
	"}\n"
	"static void kgb_it_next(kgb_it_t *it)\n"
	"{\n"
	"\tfor (int k = it->nd - 1; k >= 0; k--) {\n"
	"\t\tfor (int t = 0; t < 3; t++)\n"
	"\t\t\tit->off[t] += it->s[t][k];\n"
	"\t\tif (++it->id[k] < it->n[k])\n"
	"\t\t\treturn;\n"
	"\t\tit->id[k] = 0;\n"
	"\t\tfor (int t = 0; t < 3; t++)\n"
	"\t\t\tit->off[t] -= (long)it->n[k] * it->s[t][k];\n"
	"\t}\n"
	"}\n"
	"static void kgb_line_seek(long l, int dim, const int *n, const int *s0, const int *s1, const int *s2,\n"
	"                          long *off)\n"
	"{\n"
	"\toff[0] = off[1] = off[2] = 0;\n"
	"\tfor (int d = KGB_KD - 1; d >= 0; d--) {\n"
	"\t\tif (d == dim)\n"
	"\t\t\tcontinue;\n"
	"\t\tint q = (int)(l % n[d]);\n"
	"\t\tl /= n[d];\n"
	"\t\toff[0] += (long)q * s0[d];\n"
	"\t\toff[1] += (long)q * s1[d];\n"
	"\t\toff[2] += (long)q * s2[d];\n"
	"\t}\n"
	"}\n"
	"static void kgb_bcast(int ond, int bnd, const int *bn, const int *bs, int *eff)\n"
	"{\n"
	"\tint lead = ond - bnd;\n"
	"\tfor (int d = 0; d < KGB_KD; d++) {\n"
	"\t\tint j = d - lead;\n"
	"\t\teff[d] = (d < ond && j >= 0 && bn[j] != 1) ? bs[j] : 0;\n"
	"\t}\n"
	"}\n"
	"typedef struct {\n"
	"\tkgb_it_t in;\n"
	"\tlong base;\n"
	"\tlong out;\n"
	"} kgb_red_t;\n"
	"static void kgb_red_seek(kgb_red_t *r, int o, int mask, const int *n, const int *s, const int *on,\n"
	"                         const int *os)\n"
	"{\n"
	"\tint rn[KGB_KD], rs[KGB_KD];\n"
	"\tlong rem = o;\n"
	"\tr->base = 0;\n"
	"\tfor (int d = KGB_KD - 1; d >= 0; d--) {\n"
	"\t\tbool red = (mask >> d) & 1;\n"
	"\t\trn[d] = red ? n[d] : 1;\n"
	"\t\trs[d] = red ? s[d] : 0;\n"
	"\t\tif (!red) {\n"
	"\t\t\tint q = (int)(rem % n[d]);\n"
	"\t\t\trem /= n[d];\n"
	"\t\t\tr->base += (long)q * s[d];\n"
	"\t\t}\n"
	"\t}\n"
	"\tkgb_it_t ot;\n"
	"\tkgb_it_init(&ot, on, os, os, os);\n"
	"\tkgb_it_seek(&ot, o);\n"
	"\tr->out = ot.off[0];\n"
	"\tkgb_it_init(&r->in, rn, rs, rs, rs);\n"
	"\tkgb_it_seek(&r->in, 0);\n"
	"}\n"
	"#define KGB_BIN_PARAMS                                                          \\\n"
	"\tint n, int ond, KGB_DIMS(n), KGB_DIMS(o), int snd, KGB_DIMS(an), KGB_DIMS(as), \\\n"
	"\tint bnd, KGB_DIMS(bn), KGB_DIMS(bs)\n"
	"#define KGB_BIN_BEGIN(it, base, ept)                                            \\\n"
	"\tlong base = (long)get_global_id(0) * (ept);                                 \\\n"
	"\tif (base >= n)                                                               \\\n"
	"\t\treturn;                                                                 \\\n"
	"\tkgb_it_t it;                                                                 \\\n"
	"\t{                                                                           \\\n"
	"\t\tint kgb_n_[KGB_KD] = KGB_ARR(n), kgb_o_[KGB_KD] = KGB_ARR(o);            \\\n"
	"\t\tint kgb_an_[KGB_KD] = KGB_ARR(an), kgb_as_[KGB_KD] = KGB_ARR(as);        \\\n"
	"\t\tint kgb_bn_[KGB_KD] = KGB_ARR(bn), kgb_bs_[KGB_KD] = KGB_ARR(bs);        \\\n"
	"\t\tint kgb_ea_[KGB_KD], kgb_eb_[KGB_KD];                                    \\\n"
	"\t\tkgb_bcast(ond, snd, kgb_an_, kgb_as_, kgb_ea_);                         \\\n"
	"\t\tkgb_bcast(ond, bnd, kgb_bn_, kgb_bs_, kgb_eb_);                         \\\n"
	"\t\tkgb_it_init(&it, kgb_n_, kgb_ea_, kgb_eb_, kgb_o_);                      \\\n"
	"\t\tkgb_it_seek(&it, base);                                                  \\\n"
	"\t}\n"
	"#define KGB_RED_PARAMS int nout, int mask, int rlen, KGB_DIMS(n), KGB_DIMS(s), KGB_DIMS(on), KGB_DIMS(os)\n"
	"#define KGB_RED_BEGIN(r)                                                        \\\n"
	"\tkgb_red_t r;                                                                \\\n"
	"\tif ((int)get_global_id(0) >= nout)                                          \\\n"
	"\t\treturn;                                                                 \\\n"
	"\t{                                                                           \\\n"
	"\t\tint kgb_n_[KGB_KD] = KGB_ARR(n), kgb_s_[KGB_KD] = KGB_ARR(s);              \\\n"
	"\t\tint kgb_on_[KGB_KD] = KGB_ARR(on), kgb_os_[KGB_KD] = KGB_ARR(os);          \\\n"
	"\t\tkgb_red_seek(&r, (int)get_global_id(0), mask, kgb_n_, kgb_s_, kgb_on_, kgb_os_); \\\n"
	"\t}\n"
	"#endif\n";

/* Growable string; aborts on exhaustion like the rest of kgb's x-allocators. */
typedef struct sbuf {
	char *s;
	size_t len, cap;
} sbuf_t;

static void sb_printf(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf_t *b, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		size_t room = b->cap - b->len;
		va_start(ap, fmt);
		int n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
		va_end(ap);
		KGB_ASSERT(n >= 0);
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		b->cap = KGB_MAX(b->cap * 2, b->len + (size_t)n + 256);
		b->s = kgb_xrealloc(b->s, b->cap);
	}
}

static void emit_tensor(sbuf_t *b, const char *name, kgb_dtype_t dt)
{
	const char *ty = kgb_dtype_cl_type(dt);
	sb_printf(b, "#define T_%s %s\n", name, ty);
	sb_printf(b, "#define KGB_DTYPE_%s_%s 1\n", name, kgb_dtype_name(dt));
	/* how each dtype is loaded and stored; any other (integers, f64): the native type
	 * both ways */
	static const struct {
		kgb_dtype_t dt;
		const char *load, *store;
	} io[] = {
		{ KGB_DT_F16, "vload_half((i), (p))", "vstore_half((float)(v), (i), (p))" },
		{ KGB_DT_BF16, "kgb_bf16_to_float((p)[i])", "((p)[i] = kgb_float_to_bf16((float)(v)))" },
		{ KGB_DT_F32, "((float)(p)[i])", "((p)[i] = (float)(v))" },
		{ KGB_DT_BOOL, "((p)[i])", "((p)[i] = (uchar)((v) != 0))" },
	};
	for (size_t k = 0; k < sizeof io / sizeof io[0]; k++) {
		if (io[k].dt == dt) {
			sb_printf(b, "#define LOAD_%s(p, i) %s\n", name, io[k].load);
			sb_printf(b, "#define STORE_%s(p, i, v) %s\n", name, io[k].store);
			return;
		}
	}
	sb_printf(b, "#define LOAD_%s(p, i) ((p)[i])\n", name);
	sb_printf(b, "#define STORE_%s(p, i, v) ((p)[i] = (%s)(v))\n", name, ty);
}

/* See prelude.h. */
char *kgb_prelude_opencl(const char *const *names, const kgb_dtype_t *dtypes, size_t n, const char *file)
{
	sbuf_t b = { 0 };
	sb_printf(&b, "%s%s", prelude_head, prelude_strided);
	for (size_t i = 0; i < n; i++)
		emit_tensor(&b, names[i], dtypes[i]);
	if (file) {
		/* a file name with quotes or backslashes would break the directive */
		sb_printf(&b, "#line 1 \"");
		for (const char *p = file; *p; p++)
			sb_printf(&b, "%c", (*p == '"' || *p == '\\' || *p == '\n') ? '_' : *p);
		sb_printf(&b, "\"\n");
	} else {
		sb_printf(&b, "#line 1\n");
	}
	return b.s;
}
