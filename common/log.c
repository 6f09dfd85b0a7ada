/* Logging: one line per event on stderr, written with a single write() so lines from
 * several threads (or a parent and its children) do not interleave. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

kgb_log_level_t kgb_log_threshold = KGB_LOG_INFO;
static char log_ident[32] = "kgb";

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG"};

static int parse_level(const char *s, kgb_log_level_t *out)
{
	static const char *const lower[] = {"error", "warn", "info", "debug"};
	for (int i = 0; i < 4; i++)
		if (strcasecmp(s, lower[i]) == 0) {
			*out = (kgb_log_level_t)i;
			return 0;
		}
	if (strcasecmp(s, "warning") == 0) {
		*out = KGB_LOG_WARN;
		return 0;
	}
	return -1;
}

/* Set the ident and the threshold (level_name, else $KGB_LOG_LEVEL, else info). An
 * unknown level name is reported once and ignored. */
void kgb_log_init(const char *ident, const char *level_name)
{
	if (ident)
		kgb_strlcpy(log_ident, ident, sizeof log_ident);
	const char *lv = level_name ? level_name : getenv("KGB_LOG_LEVEL");
	if (lv && *lv) {
		kgb_log_level_t l;
		if (parse_level(lv, &l) == 0)
			kgb_log_threshold = l;
		else
			kgb_log_write(KGB_LOG_WARN, "unknown log level '%s' (error|warn|info|debug), using %s", lv,
			              level_names[kgb_log_threshold]);
	}
	setvbuf(stderr, NULL, _IOLBF, 0);
}

/* Format one line: "<ISO-8601 UTC with ms> <ident> <LEVEL> <message>\n". */
void kgb_log_write(kgb_log_level_t lvl, const char *fmt, ...)
{
	char line[4096];
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	if ((unsigned)lvl > KGB_LOG_DEBUG)
		lvl = KGB_LOG_DEBUG;
	int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s ", tm.tm_year + 1900,
	                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
	                 log_ident, level_names[lvl]);
	if (n < 0)
		return;
	size_t used = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + used, sizeof line - used, fmt, ap);
	va_end(ap);
	if (m > 0)
		used += (size_t)m < sizeof line - used ? (size_t)m : sizeof line - used - 1;
	/* one event per line: fold embedded newlines, then terminate */
	while (used > 0 && line[used - 1] == '\n')
		used--;
	for (size_t i = 0; i < used; i++)
		if (line[i] == '\n')
			line[i] = ' ';
	if (used >= sizeof line - 1) {
		used = sizeof line - 5;
		memcpy(line + used, "...", 3);
		used += 3;
	}
	line[used++] = '\n';
	fflush(stderr);
	size_t off = 0;
	while (off < used) {
		ssize_t w = write(STDERR_FILENO, line + off, used - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
}
