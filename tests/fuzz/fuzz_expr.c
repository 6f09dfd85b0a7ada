/* libFuzzer target: the plan expression evaluator and template substitution. Any
 * input must evaluate or fail with a message, never reach undefined behaviour (built
 * with float-cast-overflow among the sanitizers: a double out of an integer's range
 * converted to it is a finding).
 * Build: make fuzz; run: build/fuzz/fuzz_expr tests/fuzz/corpus/expr. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static kgb_symtab_t *st;
	if (!st) {
		st = kgb_symtab_new();
		kgb_symtab_set_int(st, "N", 1000);
		kgb_symtab_set_int(st, "out.numel", 4096);
		kgb_symtab_set_int(st, "x.stride0", -3);
		kgb_symtab_set_float(st, "eps", 1e-6);
		kgb_symtab_set_float(st, "huge", 1e300);
		kgb_symtab_set_str(st, "out.dtype", "f16");
	}
	if (size > 4096)
		return 0;
	char *src = kgb_xmalloc(size + 1);
	memcpy(src, data, size);
	src[size] = '\0';
	char err[512];
	kgb_value_t v;
	if (kgb_expr_eval(src, st, &v, err, sizeof err) != 0)
		KGB_ASSERT(err[0] != '\0');
	int64_t i;
	if (kgb_expr_eval_int(src, st, &i, err, sizeof err) != 0)
		KGB_ASSERT(err[0] != '\0');
	char *s = kgb_expr_subst(src, st, err, sizeof err);
	free(s);
	free(src);
	return 0;
}
