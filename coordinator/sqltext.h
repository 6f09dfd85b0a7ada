/* Text for the store's statements and values from its results: a growing string for
 * the array literals of multi-row statements, decimal parameters, numbers read back
 * from result fields, text made acceptable to the store. The bottom of the
 * coordinator (docs/architecture.md, "Layers of the coordinator"): it knows nothing of
 * jobs, workers or campaigns. */
#ifndef KGB_COORD_SQLTEXT_H
#define KGB_COORD_SQLTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A growing string (for array literals of multi-row statements). */
typedef struct kgb_sbuf {
	char *s;
	size_t len, cap;
} kgb_sbuf_t;
void kgb_sbuf_add(kgb_sbuf_t *b, const char *s, size_t n);
void kgb_sbuf_addc(kgb_sbuf_t *b, char ch);
void kgb_sbuf_u64(kgb_sbuf_t *b, uint64_t v);
/* A float8 as PostgreSQL reads it (NaN, Infinity, -Infinity). */
void kgb_sbuf_f64(kgb_sbuf_t *b, double v);
/* An element of a text[] literal: quoted, '"' and '\' escaped; NULL: NULL. */
void kgb_sbuf_arrtext(kgb_sbuf_t *b, const char *s);
/* Take the string (NUL-terminated); b is empty afterwards. */
char *kgb_sbuf_take(kgb_sbuf_t *b);
/* A job row's wait, in milliseconds, until its not_before (0 when past or unset). */
#define KGB_SQL_NOT_BEFORE_MS "GREATEST(0, COALESCE(EXTRACT(EPOCH FROM (not_before - now())) * 1000, 0))::float8"

/* Decimal strings for query parameters (static rotating buffers, 8 deep). */
const char *kgb_coord_u64(uint64_t v);
const char *kgb_coord_i64(int64_t v);
const char *kgb_coord_f64(double v);
/* A result field as a number (NULL or empty: 0; a negative integer wraps). */
uint64_t kgb_coord_pq_u64(const char *s);
double kgb_coord_pq_f64(const char *s);
/* Copy of s with every byte that is not part of valid UTF-8 replaced by '?' (the
 * store refuses invalid text); NULL gives "". Caller frees. */
char *kgb_coord_utf8(const char *s);
/* Write a label value of the metrics' exposition text with \, " and newline escaped
 * (the exposition format's rule); here, below metrics.c and the modules that render
 * their own series for it (rcheck.c). */
void kgb_metrics_label(FILE *f, const char *s);

#endif
