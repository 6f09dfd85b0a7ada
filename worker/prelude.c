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
	switch (dt) {
	case KGB_DT_F16:
		sb_printf(b, "#define LOAD_%s(p, i) vload_half((i), (p))\n", name);
		sb_printf(b, "#define STORE_%s(p, i, v) vstore_half((float)(v), (i), (p))\n", name);
		break;
	case KGB_DT_BF16:
		sb_printf(b, "#define LOAD_%s(p, i) kgb_bf16_to_float((p)[i])\n", name);
		sb_printf(b, "#define STORE_%s(p, i, v) ((p)[i] = kgb_float_to_bf16((float)(v)))\n", name);
		break;
	case KGB_DT_F32:
		sb_printf(b, "#define LOAD_%s(p, i) ((float)(p)[i])\n", name);
		sb_printf(b, "#define STORE_%s(p, i, v) ((p)[i] = (float)(v))\n", name);
		break;
	case KGB_DT_BOOL:
		sb_printf(b, "#define LOAD_%s(p, i) ((p)[i])\n", name);
		sb_printf(b, "#define STORE_%s(p, i, v) ((p)[i] = (uchar)((v) != 0))\n", name);
		break;
	default: /* integers and f64: the native type both ways */
		sb_printf(b, "#define LOAD_%s(p, i) ((p)[i])\n", name);
		sb_printf(b, "#define STORE_%s(p, i, v) ((p)[i] = (%s)(v))\n", name, ty);
		break;
	}
}

/* See prelude.h. */
char *kgb_prelude_opencl(const char *const *names, const kgb_dtype_t *dtypes, size_t n, const char *file)
{
	sbuf_t b = { 0 };
	sb_printf(&b, "%s", prelude_head);
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
