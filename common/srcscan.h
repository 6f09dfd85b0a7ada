/* What a C-family kernel source (OpenCL C, CUDA C, HIP) may ask its compiler to
 * read: nothing but itself, kgb's prelude and, for CUDA C and HIP, the toolkit's own
 * headers the language needs (docs/security.md, "What a candidate can read"). A
 * lexical check, made where a manifest is validated and again before every compile:
 *   - #include, #include_next, #import, #embed (and clang's #__include_macros) are
 *     refused, except #include <H> of an allowlisted toolkit header H;
 *   - __has_include, __has_include_next and __has_embed (which probe whether a path
 *     exists) are refused anywhere, and #pragma ... dependency (a file's date). A
 *     __has_include made by token pasting (##) is not seen: it can still tell whether
 *     a path exists, one bit per compile; it reads nothing;
 *   - trigraphs that make a '#' or a '\' (??= and ??/) are refused.
 * Directives are found at every '#' and '%:' of the text with its line splices
 * removed, inside comments and strings too, so that no directive the compiler sees
 * escapes the check (a "#include" in a comment is refused as well). */
#ifndef KGB_SRCSCAN_H
#define KGB_SRCSCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"

/* 0, or -1 with err naming name, the line and the directive or word:
 * "add.cl: line 3: #include \"/etc/hostname\" refused: ...". Languages other than
 * OpenCL C, CUDA C and HIP pass (they are not preprocessed by kgb's compilers). */
int kgb_src_check(const char *src, size_t len, kgb_lang_t lang, const char *name, char *err, size_t errlen);

/* OpenCL build options a plan may give: -cl-* flags, -D NAME[=VALUE], -w, -Werror.
 * Anything else (-I, -include, -x, @file, ...) could make the compiler read a file.
 * 0, or -1 with err naming the option. */
int kgb_src_check_ocl_options(const char *opts, char *err, size_t errlen);

#endif
