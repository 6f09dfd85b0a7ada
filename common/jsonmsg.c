/* See jsonmsg.h. */
#include "jsonmsg.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int kgb_jctx_err(kgb_jctx_t *c, const char *path, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (path && *path)
		return kgb_err(c->err, c->errlen, "%s: %s: %s", c->origin, path, msg);
	return kgb_err(c->err, c->errlen, "%s: %s", c->origin, msg);
}

int kgb_jctx_check_keys(kgb_jctx_t *c, const char *path, json_t *obj, const char *const *allowed)
{
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v) {
		bool ok = false;
		for (const char *const *a = allowed; *a; a++)
			if (strcmp(key, *a) == 0)
				ok = true;
		if (!ok) {
			char list[300] = "";
			size_t n = 0;
			for (const char *const *a = allowed; *a && n < sizeof list; a++)
				n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", a == allowed ? "" : ", ", *a);
			char p[320];
			kgb_json_path(p, sizeof p, "%s%s%s", path, *path ? "." : "", key);
			return kgb_jctx_err(c, p, "unknown key (allowed here: %s)", list);
		}
	}
	return 0;
}

int kgb_jctx_get_str(kgb_jctx_t *c, const char *path, json_t *obj, const char *key, bool required, char **out)
{
	char p[256];
	kgb_json_path(p, sizeof p, "%s%s%s", path, *path ? "." : "", key);
	json_t *v = json_object_get(obj, key);
	*out = NULL;
	if (!v) {
		if (required)
			return kgb_jctx_err(c, p, "missing (a string is required)");
		return 0;
	}
	if (!json_is_string(v))
		return kgb_jctx_err(c, p, "expected a string, got %s", kgb_json_show(v));
	*out = kgb_xstrdup(json_string_value(v));
	return 0;
}

const char *kgb_json_show(const json_t *v)
{
	static __thread char buf[96];
	if (!v)
		return "nothing";
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	if (!s)
		return "?";
	if (strlen(s) >= sizeof buf) {
		memcpy(buf, s, sizeof buf - 4);
		memcpy(buf + sizeof buf - 4, "...", 4);
	} else {
		strcpy(buf, s);
	}
	free(s);
	return buf;
}

void kgb_json_path(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}
