/* Output for the kgb CLI: aligned tables, number formats, progress bars, CSV, JSON. */
#ifndef KGB_CLI_OUTPUT_H
#define KGB_CLI_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

/* ---- tables ---- */

typedef struct kgb_cli_table kgb_cli_table_t;

/* A table of ncols columns. headers: ncols names (copied). align: ncols characters,
 * one per column, its kind: 'l' a value read or typed (identifier, verdict, parameter,
 * time), left-aligned; 'r' the same right-aligned (numbers); 'a'/'A' such a value whose
 * " [...]" and " (...)" parts may be left out; 's' like 'l', and its rows may be grouped
 * under "HEADER: value" headings; 'd'/'D' decoration, dropped when the table does not
 * fit; 'w' free text (messages, notes), wrapped. NULL: all 'l'. Destroy with
 * kgb_cli_table_destroy. */
kgb_cli_table_t *kgb_cli_table_new(int ncols, const char *const *headers, const char *align);
void kgb_cli_table_destroy(kgb_cli_table_t **t);
/* Append one cell to the current row (a row is complete after ncols cells; the next
 * cell starts a new one). The text is formatted like printf and copied. */
void kgb_cli_table_cell(kgb_cli_table_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Rows so far (complete or not). */
size_t kgb_cli_table_rows(const kgb_cli_table_t *t);
/* Render the table: the header line, then every row; columns separated by two spaces,
 * widths by the widest cell (in characters, UTF-8 aware), no trailing blanks; a short
 * last row is padded with empty cells. Caller frees. */
char *kgb_cli_table_render(const kgb_cli_table_t *t);
/* The same within max_width display columns (0: no limit). A table that fits is
 * rendered as it is. One that does not, step by step until it fits: a column holding
 * one value on every row is said once above the table ("HEADER: value"); 'a'/'A'
 * columns lose their bracketed parts; 'd'/'D' columns are dropped, the last first;
 * 'w' columns wrap onto continuation lines (down to 20 columns); rows are grouped
 * under headings of the 's' column with the fewest distinct values; 'w' columns are
 * dropped; still too wide: each row as a block of "HEADER  value" lines (a
 * record). No value of an 'l', 'r' or 's' column is ever cut. A last line in
 * parentheses names what was abbreviated or left out. Caller frees. */
char *kgb_cli_table_render_width(const kgb_cli_table_t *t, size_t max_width);
/* --wide (no width limit) and -o/--format COLUMNS (comma-separated header names, any
 * case, '_' or ' ' as '-', or a prefix of one: only those columns of each table that
 * has any of them, in that order), for every table printed after. A name close to a
 * column's but not one exits 1 ("did you mean"); a name no table printed had exits 1
 * when the command ends. */
void kgb_cli_table_options(bool wide, const char *columns);
/* The width tables are printed within: none with --wide, else $KGB_TABLE_WIDTH when
 * set (0: no limit), else the terminal's width when stdout is one, else 120. */
size_t kgb_cli_table_width(void);
/* text (lines ending in '\n') printed within kgb_cli_table_width(): a longer line
 * wraps at blanks, its continuation lines indented two more than it. */
void kgb_cli_print_wrapped(FILE *f, const char *text);
/* The table with the -o columns, within kgb_cli_table_width(). Caller frees. */
char *kgb_cli_table_render_fit(const kgb_cli_table_t *t);
/* Print kgb_cli_table_render_fit(t). */
void kgb_cli_table_print(const kgb_cli_table_t *t, FILE *f);

/* The candidate closest to word by edit distance (a prefix counts as close), when
 * close enough to be a likely typo ("did you mean"); NULL otherwise. */
const char *kgb_cli_suggest(const char *word, const char *const *cands, size_t n);

/* Display width of a UTF-8 string (code points; every one counts as one column). */
size_t kgb_cli_text_width(const char *s);

/* ---- number formats (all write into buf and return it) ---- */

/* Speedup: "1.42x", "12.5x", "134x"; "-" for 0, negative or non-finite. */
const char *kgb_cli_fmt_speedup(double x, char *buf, size_t n);
/* Token counts: "850", "1.5k", "12.3k", "123k", "4.6M", "1.2G"; "-" if negative or
 * non-finite. */
const char *kgb_cli_fmt_tokens(double x, char *buf, size_t n);
/* A Unix time in local time with strftime's fmt ("%Y-%m-%d %H:%M:%S"); "-" when not
 * > 0. */
const char *kgb_cli_fmt_local(int64_t unix_s, const char *fmt, char *buf, size_t n);
/* Durations in seconds: "0.42s", "12.3s", "2m03s", "1h02m"; "-" if negative. */
const char *kgb_cli_fmt_duration(double s, char *buf, size_t n);
/* Time since an event in ms: "now", "3s ago", "2m ago", "5h ago", "3d ago"; "never"
 * when ms < 0. */
const char *kgb_cli_fmt_ago(int64_t ms, char *buf, size_t n);
/* A number for CSV and JSON-like output, never in exponent form for integers: an
 * integral value as an integer ("13840800"), another as the shortest of %.15g, %.16g
 * and %.17g that reads back as the same double; "" when not finite. */
const char *kgb_cli_fmt_num(double x, char *buf, size_t n);
/* A share as a percentage: "42%", "100%", "0.5%"; "-" when den is 0. */
const char *kgb_cli_fmt_pct(double num, double den, char *buf, size_t n);
/* Time in ns: "850ns", "12.3us", "4.56ms", "1.23s"; "-" for 0 or less. */
const char *kgb_cli_fmt_ns(double ns, char *buf, size_t n);

/* A progress bar of width cells between brackets: '#' done, '!' failed or cancelled,
 * '>' running, '.' the rest: "[####!>....]". The cells are apportioned so that a
 * non-zero count always gets at least one cell when width allows. */
const char *kgb_cli_progress_bar(char *buf, size_t n, int width, uint32_t done, uint32_t failed,
                                 uint32_t running, uint32_t total);

/* A campaign's input seed as results and show print it (state as the coordinator sends
 * it: "fixed", "secret", "revealed"; empty from an older coordinator): "input seed 7
 * (fixed by the manifest)", "input seed: secret until the campaign ends", "input seed
 * 912...  (drawn secretly, revealed now that the campaign has ended)". Returns buf. */
const char *kgb_cli_seed_text(uint64_t seed, const char *state, char *buf, size_t n);

/* ---- CSV (RFC 4180) ---- */

/* A field quoted as needed: wrapped in double quotes, inner quotes doubled, when it
 * holds a comma, a quote, CR or LF, or begins or ends with a blank. Caller frees. */
char *kgb_cli_csv_quote(const char *s);
/* Write n fields (NULL is an empty field) as one CSV line ending in "\n". */
void kgb_cli_csv_row(FILE *f, const char *const *fields, int n);

/* ---- JSON ---- */

/* Print j (indented by 2, keys in insertion order) and a newline to f; steals j. With
 * kgb_cli_output_csv(true) (--csv), j is written as kgb_cli_json_to_csv writes it. */
void kgb_cli_json_print(FILE *f, json_t *j);
void kgb_cli_output_csv(bool on);
/* A JSON document as CSV: its rows are the document when it is an array, else its
 * largest member that is an array of objects, else the object itself; a header line
 * of every key (nested objects as "key.sub", in order of first appearance), then one
 * line per row (arrays of scalars joined with ";", others as compact JSON). */
void kgb_cli_json_to_csv(FILE *f, json_t *j);

#endif
