/* Messages about the JSON documents kgb reads (manifests, launch plans): every one
 * names the document, the JSON path and the value, "origin: path: what". */
#ifndef KGB_JSONMSG_H
#define KGB_JSONMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

/* Where messages go while one document is read. */
typedef struct kgb_jctx {
	const char *origin;          /* the file name, or what the document is */
	char *err;
	size_t errlen;
} kgb_jctx_t;

/* Fill c->err with "origin: path: message" ("origin: message" for an empty or NULL
 * path); returns -1. */
int kgb_jctx_err(kgb_jctx_t *c, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Refuse a key of obj that is not in allowed (NULL-terminated), naming the allowed
 * ones. Returns 0 or -1 (message set). */
int kgb_jctx_check_keys(kgb_jctx_t *c, const char *path, json_t *obj, const char *const *allowed);

/* obj's string key (path.key in messages) copied into *out (NULL when it is absent and
 * not required). Returns 0 or -1 (message set). */
int kgb_jctx_get_str(kgb_jctx_t *c, const char *path, json_t *obj, const char *key, bool required, char **out);

/* The value as compact JSON, truncated, for messages (thread-local buffer). */
const char *kgb_json_show(const json_t *v);

/* Build a JSON path into buf (truncation only shortens a message). */
void kgb_json_path(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
