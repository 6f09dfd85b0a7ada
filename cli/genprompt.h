/* Prompts and answers of `kgb generate` (docs/methods.md): the templates a lab can
 * edit, the operator's description from the catalog, and the candidate's files taken
 * out of a model's answer. */
#ifndef KGB_CLI_GENPROMPT_H
#define KGB_CLI_GENPROMPT_H

#include <jansson.h>
#include <stddef.h>

#include "catalog.h"

/* Candidate formats a run asks for. */
typedef enum {
	KGB_GEN_OPENCL = 0,   /* a kgb launch plan + OpenCL C kernels (docs/candidate-format.md) */
	KGB_GEN_CUDA,         /* a kgb launch plan + CUDA C++ kernels */
	KGB_GEN_PYTHON,       /* a KernelGenBench-format Python + Triton module (docs/python-candidates.md) */
} kgb_gen_format_t;

/* "opencl", "cuda", "python" -> the format; -1 for any other name. */
int kgb_gen_format_parse(const char *name);
const char *kgb_gen_format_name(kgb_gen_format_t f);

/* The templates: system, user, the answer format, reflection. */
enum { KGB_GEN_T_SYSTEM = 0, KGB_GEN_T_USER, KGB_GEN_T_FORMAT, KGB_GEN_T_REFLECTION, KGB_GEN_NT };
typedef struct kgb_gen_templates {
	char *text[KGB_GEN_NT];
	char *origin[KGB_GEN_NT];   /* file it came from, or "built-in NAME" */
} kgb_gen_templates_t;

/* Load the templates for format f: each file of dir (system.txt, user.txt,
 * format-<f>.txt, reflection.txt) that exists replaces the built-in one; dir NULL: the
 * built-in ones. Release with kgb_gen_templates_release. Returns 0 or -1 with err
 * naming the file. */
int kgb_gen_templates_load(const char *dir, kgb_gen_format_t f, kgb_gen_templates_t *t, char *err, size_t errlen);
void kgb_gen_templates_release(kgb_gen_templates_t *t);
/* Write every built-in template into dir (made if missing; existing files are left
 * alone and named in err). Returns 0 or -1. */
int kgb_gen_templates_dump(const char *dir, char *err, size_t errlen);

/* Replace every {{name}} of tmpl by its value from vars (name, value pairs, NULL
 * name ends). An unknown name is an error naming origin and the name. Returns the text
 * (caller frees) or NULL. */
char *kgb_gen_render(const char *tmpl, const char *origin, const char *const *vars, char *err, size_t errlen);

/* The operator's description for the prompt (caller frees each): its overloads with
 * their case counts, its tensors (role, dtypes, ranks) and a summary of its cases. */
typedef struct kgb_gen_opdesc {
	char *overloads, *tensors, *cases;
} kgb_gen_opdesc_t;
int kgb_gen_describe_op(const kgb_op_t *op, bool smoke, kgb_gen_opdesc_t *d, char *err, size_t errlen);
void kgb_gen_opdesc_release(kgb_gen_opdesc_t *d);

/* Take the candidate out of a model's answer: for a plan format the last ```json block
 * holding a plan and, for each kernel source it names, the block named after that file
 * (in its info string or on the line before it; a lone code block serves a lone
 * source); for Python the last ```python block. Returns {"files": {name: text}} (the
 * plan as "plan.json", the module as "module.py") or NULL with err saying what is
 * missing. A block cut off by the end of the answer is taken as it is. */
json_t *kgb_gen_extract(kgb_gen_format_t f, const char *content, char *err, size_t errlen);

/* What the answer format says about a plan format's language (static text). */
const char *kgb_gen_language_notes(kgb_gen_format_t f);

/* A candidate's files as fenced blocks, for a reflection prompt (caller frees). */
char *kgb_gen_files_text(kgb_gen_format_t f, json_t *code);

#endif
