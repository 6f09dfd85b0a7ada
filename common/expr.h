/* A small, safe arithmetic expression evaluator for launch plans and scratch sizes.
 * Grammar (C precedence): literals (integer, float), names ([A-Za-z_][A-Za-z0-9_.]*,
 * dots allowed so "out.numel" and "x.stride1" are names), + - * / % (integer division
 * truncates toward zero when both sides are integers; / by zero is an error),
 * unary - !, comparisons < <= > >= == !=, && ||, ?: and the functions
 * cdiv(a,b) min(a,b,...) max(a,b,...) next_pow2(a) log2(a) (floor, integer) abs(a)
 * floor(a) ceil(a) align(a,b) (round a up to a multiple of b).
 * Values are int64 or double; integer overflow is an error. No side effects, no
 * recursion deeper than 64, input length bounded to 4096 characters. */
#ifndef KGB_EXPR_H
#define KGB_EXPR_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

typedef struct kgb_value {
	bool is_float;
	int64_t i;
	double f;
} kgb_value_t;

/* Symbol table of named values (case parameters, shapes, strides, scalars). Names are
 * copied. Also holds string-valued symbols (dtype names) used by define substitution. */
typedef struct kgb_symtab kgb_symtab_t;
kgb_symtab_t *kgb_symtab_new(void);
void kgb_symtab_destroy(kgb_symtab_t **st);
void kgb_symtab_set_int(kgb_symtab_t *st, const char *name, int64_t v);
void kgb_symtab_set_float(kgb_symtab_t *st, const char *name, double v);
void kgb_symtab_set_str(kgb_symtab_t *st, const char *name, const char *v);
/* Returns true and fills *v if name is a numeric symbol. */
bool kgb_symtab_get(const kgb_symtab_t *st, const char *name, kgb_value_t *v);
/* Returns the string symbol or NULL. */
const char *kgb_symtab_get_str(const kgb_symtab_t *st, const char *name);
/* Iterate: returns false past the end. *name valid until the table changes. */
size_t kgb_symtab_count(const kgb_symtab_t *st);
bool kgb_symtab_at(const kgb_symtab_t *st, size_t i, const char **name, kgb_value_t *v, const char **str);

/* Evaluate src against st. Returns 0 and fills *out, or -1 with a message naming the
 * position and the problem ("unknown name 'N' at 5", "division by zero at 9"). */
int kgb_expr_eval(const char *src, const kgb_symtab_t *st, kgb_value_t *out, char *err, size_t errlen);
/* Same, requiring an integer result (a float with no fractional part is accepted). */
int kgb_expr_eval_int(const char *src, const kgb_symtab_t *st, int64_t *out, char *err, size_t errlen);
double kgb_value_as_double(kgb_value_t v);

/* Replace every {expr} in tmpl with the value of expr (a string symbol's text, or the
 * number) and write the result to a heap string (caller frees). "{{" is a literal '{'.
 * Returns NULL and fills err on failure. */
char *kgb_expr_subst(const char *tmpl, const kgb_symtab_t *st, char *err, size_t errlen);

#endif
