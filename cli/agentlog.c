/* Token usage from agents' logs; see agentlog.h. */
#include "agentlog.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define AGENTLOG_MAX_FILE (256u << 20)

double kgb_usage_total(const kgb_usage_t *u)
{
	return u->input + u->output + u->cache_write + u->cache_read;
}

static void usage_add(kgb_usage_t *a, const kgb_usage_t *b)
{
	a->input += b->input;
	a->output += b->output;
	a->cache_write += b->cache_write;
	a->cache_read += b->cache_read;
	a->reasoning += b->reasoning;
	a->has_reasoning |= b->has_reasoning;
}

static double dmax(double a, double b)
{
	return a > b ? a : b;
}

static void usage_max(kgb_usage_t *a, const kgb_usage_t *b)
{
	a->input = dmax(a->input, b->input);
	a->output = dmax(a->output, b->output);
	a->cache_write = dmax(a->cache_write, b->cache_write);
	a->cache_read = dmax(a->cache_read, b->cache_read);
	a->reasoning = dmax(a->reasoning, b->reasoning);
	a->has_reasoning |= b->has_reasoning;
}

/* Field key of obj (absent or null: 0) into *v: a number >= 0, else an error naming
 * the file, line and the field's path (where.key). */
static int count_field(json_t *obj, const char *key, const char *name, size_t line, const char *where, double *v,
                       char *err, size_t errlen)
{
	json_t *x = json_object_get(obj, key);
	if (!x || json_is_null(x)) {
		*v = 0;
		return 0;
	}
	if (!json_is_number(x) || json_number_value(x) < 0) {
		char *t = json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT);
		kgb_err(err, errlen, "%s:%zu: %s.%s: expected a token count (a number >= 0), got %.60s", name, line, where,
		        key, t ? t : "?");
		free(t);
		return -1;
	}
	*v = json_number_value(x);
	return 0;
}

/* An Anthropic usage object (message.usage or a result's usage). */
static int claude_usage(json_t *u, const char *name, size_t line, const char *where, kgb_usage_t *out, char *err,
                        size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (u && !json_is_object(u))
		return kgb_err(err, errlen, "%s:%zu: %s: expected an object", name, line, where);
	if (count_field(u, "input_tokens", name, line, where, &out->input, err, errlen) < 0 ||
	    count_field(u, "output_tokens", name, line, where, &out->output, err, errlen) < 0 ||
	    count_field(u, "cache_creation_input_tokens", name, line, where, &out->cache_write, err, errlen) < 0 ||
	    count_field(u, "cache_read_input_tokens", name, line, where, &out->cache_read, err, errlen) < 0)
		return -1;
	return 0;
}

/* OpenCode's part.tokens: input, output, reasoning, cache.read, cache.write. */
static int opencode_usage(json_t *t, const char *name, size_t line, kgb_usage_t *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (!json_is_object(t))
		return kgb_err(err, errlen, "%s:%zu: part.tokens: expected an object with input, output, reasoning, cache",
		               name, line);
	json_t *cache = json_object_get(t, "cache");
	if (cache && !json_is_null(cache) && !json_is_object(cache))
		return kgb_err(err, errlen, "%s:%zu: part.tokens.cache: expected an object with read and write", name, line);
	if (count_field(t, "input", name, line, "part.tokens", &out->input, err, errlen) < 0 ||
	    count_field(t, "output", name, line, "part.tokens", &out->output, err, errlen) < 0 ||
	    count_field(t, "reasoning", name, line, "part.tokens", &out->reasoning, err, errlen) < 0 ||
	    count_field(cache, "read", name, line, "part.tokens.cache", &out->cache_read, err, errlen) < 0 ||
	    count_field(cache, "write", name, line, "part.tokens.cache", &out->cache_write, err, errlen) < 0)
		return -1;
	out->has_reasoning = true;
	return 0;
}

/* Messages (or parts) seen, by id: index into a usage array, with the version
 * segment each was first seen in. */
typedef struct seen {
	json_t *ids;            /* id -> integer index */
	kgb_usage_t *u;
	size_t *seg;
	size_t n, cap;
} seen_t;

/* The usage slot of id (a new one, zeroed, in segment seg, the first time). */
static kgb_usage_t *seen_slot(seen_t *s, const char *id, size_t seg)
{
	json_t *k = id ? json_object_get(s->ids, id) : NULL;
	if (k)
		return &s->u[json_integer_value(k)];
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->u = kgb_xrealloc(s->u, s->cap * sizeof *s->u);
		s->seg = kgb_xrealloc(s->seg, s->cap * sizeof *s->seg);
	}
	memset(&s->u[s->n], 0, sizeof *s->u);
	s->seg[s->n] = seg;
	if (id)
		json_object_set_new(s->ids, id, json_integer((json_int_t)s->n));
	return &s->u[s->n++];
}

/* The versions found so far; segs[k] the tokens of version k, segs[n] those after
 * the last answer. */
typedef struct versions {
	kgb_agentlog_version_t *v;
	kgb_usage_t *segs;
	size_t n;
} versions_t;

static void version_push(versions_t *vs, unsigned long long cid, bool passed)
{
	vs->v = kgb_xrealloc(vs->v, (vs->n + 1) * sizeof *vs->v);
	memset(&vs->v[vs->n], 0, sizeof *vs->v);
	vs->v[vs->n].campaign_id = cid;
	vs->v[vs->n].passed = passed;
	vs->n++;
	vs->segs = kgb_xrealloc(vs->segs, (vs->n + 1) * sizeof *vs->segs);
	memset(&vs->segs[vs->n], 0, sizeof *vs->segs);
}

/* A kgb verify --json answer in a tool's output text: its campaign id and verdict.
 * The JSON object may follow other output (notes on stderr). */
static bool verify_answer(const char *text, unsigned long long *cid, bool *passed)
{
	const char *p = text ? strchr(text, '{') : NULL;
	if (!p)
		return false;
	json_error_t je;
	json_t *j = json_loads(p, JSON_DISABLE_EOF_CHECK, &je);
	json_t *c = json_object_get(j, "campaign_id");
	bool ok = json_is_integer(c) && json_integer_value(c) > 0 && json_is_array(json_object_get(j, "dev_cases"));
	if (ok) {
		*cid = (unsigned long long)json_integer_value(c);
		*passed = json_is_true(json_object_get(j, "passed"));
	}
	json_decref(j);
	return ok;
}

/* Claude Code: the verify answers in a user event's tool results (content: a string
 * or a list of text blocks). */
static void claude_answers(json_t *ev, versions_t *vs)
{
	size_t i, k;
	json_t *item, *blk;
	json_array_foreach(json_object_get(json_object_get(ev, "message"), "content"), i, item) {
		const char *t = json_string_value(json_object_get(item, "type"));
		if (!t || strcmp(t, "tool_result") != 0)
			continue;
		json_t *c = json_object_get(item, "content");
		unsigned long long cid;
		bool passed;
		if (json_is_string(c) && verify_answer(json_string_value(c), &cid, &passed))
			version_push(vs, cid, passed);
		json_array_foreach(c, k, blk)
			if (verify_answer(json_string_value(json_object_get(blk, "text")), &cid, &passed))
				version_push(vs, cid, passed);
	}
}

static void seen_reset(seen_t *s)
{
	json_object_clear(s->ids);
	s->n = 0;
}

/* A Claude Code session ends (its result event, the next init, or the end of the
 * log): its result's usage, else its messages'. Each message's usage goes to the
 * version it was first seen in; an ended session's difference between its result and
 * its messages to the version current at its end (never below zero). */
static void claude_close(kgb_agentlog_t *out, seen_t *s, versions_t *vs, bool *open, bool ended,
                         const kgb_usage_t *result)
{
	kgb_usage_t msum = { 0 };
	for (size_t i = 0; i < s->n; i++) {
		usage_add(&vs->segs[s->seg[i]], &s->u[i]);
		usage_add(&msum, &s->u[i]);
	}
	if (ended) {
		kgb_usage_t *last = &vs->segs[vs->n];
		last->input = dmax(0, last->input + result->input - msum.input);
		last->output = dmax(0, last->output + result->output - msum.output);
		last->cache_write = dmax(0, last->cache_write + result->cache_write - msum.cache_write);
		last->cache_read = dmax(0, last->cache_read + result->cache_read - msum.cache_read);
		usage_add(&out->usage, result);
		out->ended++;
	} else {
		usage_add(&out->usage, &msum);
		out->messages += (unsigned)s->n;
	}
	if (*open || ended)
		out->sessions++;
	seen_reset(s);
	*open = false;
}

void kgb_agentlog_release(kgb_agentlog_t *lg)
{
	free(lg->versions);
	lg->versions = NULL;
	lg->nversions = 0;
}

int kgb_agentlog_parse(const char *name, const char *text, size_t len, kgb_agentlog_kind_t kind,
                       kgb_agentlog_t *out, char *err, size_t errlen)
{
	seen_t s = { .ids = json_object() };
	versions_t vs = { .segs = kgb_xcalloc(1, sizeof(kgb_usage_t)) };
	kgb_agentlog_version_t *pend = NULL;  /* OpenCode: answers whose step has not finished */
	size_t pending = 0;
	bool open = false;   /* Claude: a session has begun and not ended */
	int rc = 0;
	size_t line = 0;

	memset(out, 0, sizeof *out);
	for (size_t pos = 0; pos < len && rc == 0;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		size_t l = end - pos;
		const char *p = text + pos;
		pos = end + 1;
		line++;
		while (l > 0 && (p[l - 1] == '\r' || p[l - 1] == ' ' || p[l - 1] == '\t'))
			l--;
		if (l == 0)
			continue;
		json_error_t je;
		json_t *j = json_loadb(p, l, 0, &je);
		if (!json_is_object(j)) {
			if (out->skipped < KGB_AGENTLOG_NOTES)
				snprintf(out->notes[out->skipped], sizeof out->notes[0], "%s:%zu: not a JSON event, skipped: %.60s%s",
				         name, line, p, l > 60 ? "..." : "");
			out->skipped++;
			json_decref(j);
			continue;
		}
		const char *type = json_string_value(json_object_get(j, "type"));
		if (!type)
			type = "";
		kgb_usage_t u;
		if (kind == KGB_AGENTLOG_CLAUDE) {
			const char *sub = json_string_value(json_object_get(j, "subtype"));
			if (strcmp(type, "system") == 0 && sub && strcmp(sub, "init") == 0) {
				if (open)
					claude_close(out, &s, &vs, &open, false, NULL);
				open = true;
			} else if (strcmp(type, "assistant") == 0) {
				json_t *msg = json_object_get(j, "message");
				json_t *mu = json_object_get(msg, "usage");
				if (mu && claude_usage(mu, name, line, "message.usage", &u, err, errlen) < 0) {
					rc = -1;
				} else if (mu) {
					usage_max(seen_slot(&s, json_string_value(json_object_get(msg, "id")), vs.n), &u);
					open = true;
				}
			} else if (strcmp(type, "user") == 0) {
				claude_answers(j, &vs);
			} else if (strcmp(type, "result") == 0) {
				if (claude_usage(json_object_get(j, "usage"), name, line, "usage", &u, err, errlen) < 0)
					rc = -1;
				else
					claude_close(out, &s, &vs, &open, true, &u);
			}
		} else if (strcmp(type, "step_finish") == 0) {
			json_t *part = json_object_get(j, "part");
			if (opencode_usage(json_object_get(part, "tokens"), name, line, &u, err, errlen) < 0) {
				rc = -1;
			} else {
				usage_max(seen_slot(&s, json_string_value(json_object_get(part, "id")), vs.n), &u);
				/* the step that ran the verify belongs to its version */
				for (size_t k = 0; k < pending; k++)
					version_push(&vs, pend[k].campaign_id, pend[k].passed);
				pending = 0;
			}
		} else if (strcmp(type, "tool_use") == 0) {
			unsigned long long cid;
			bool passed;
			json_t *st = json_object_get(json_object_get(j, "part"), "state");
			if (verify_answer(json_string_value(json_object_get(st, "output")), &cid, &passed)) {
				/* kept until its step finishes */
				pend = kgb_xrealloc(pend, (pending + 1) * sizeof *pend);
				pend[pending].campaign_id = cid;
				pend[pending].passed = passed;
				pending++;
			}
		}
		json_decref(j);
	}
	if (rc == 0 && kind == KGB_AGENTLOG_CLAUDE) {
		claude_close(out, &s, &vs, &open, false, NULL);
	} else if (rc == 0) {
		for (size_t k = 0; k < pending; k++)   /* answers after the last step */
			version_push(&vs, pend[k].campaign_id, pend[k].passed);
		for (size_t i = 0; i < s.n; i++) {
			usage_add(&out->usage, &s.u[i]);
			usage_add(&vs.segs[s.seg[i]], &s.u[i]);
		}
		out->messages = (unsigned)s.n;
		out->sessions = 1;
		out->usage.has_reasoning = true;
	}
	if (rc == 0) {
		for (size_t k = 0; k < vs.n; k++)
			vs.v[k].usage = vs.segs[k];
		out->after = vs.segs[vs.n];
		out->versions = vs.v;
		out->nversions = vs.n;
		vs.v = NULL;
	}
	free(pend);
	free(vs.v);
	free(vs.segs);
	json_decref(s.ids);
	free(s.u);
	free(s.seg);
	return rc;
}

int kgb_agentlog_read(const char *path, kgb_agentlog_kind_t kind, kgb_agentlog_t *out, char *err, size_t errlen)
{
	char e[256];
	size_t len = 0;
	char *text = kgb_read_regular_file(path, AGENTLOG_MAX_FILE, &len, e, sizeof e);
	if (!text)
		return kgb_err(err, errlen, "%s: cannot read: %s", path, e);
	int rc = kgb_agentlog_parse(path, text, len, kind, out, err, errlen);
	free(text);
	return rc;
}
