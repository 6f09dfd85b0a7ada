/* Model API client of kgb generate: see llm.h. */
#include "llm.h"

#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "util.h"

#define MAX_BODY (64u << 20)

typedef struct xfer {
	CURL *h;
	struct curl_slist *hdrs;
	char *body;               /* request body */
	char *resp;               /* response body so far */
	size_t rlen, rcap;
	bool too_big;
	double retry_after;       /* from the last response's headers; -1: none */
	void *tag;
	kgb_llm_answer_t a;
	double t0_ms;             /* first attempt */
	double due_ms;            /* waiting for a retry until then; 0: in flight */
	char errbuf[CURL_ERROR_SIZE];
	struct xfer *next;        /* waiting list */
} xfer_t;

char *kgb_llm_request_params(const kgb_llm_config_t *cfg)
{
	json_t *o = json_pack("{s:s,s:s,s:f,s:i}", "api", cfg->api == KGB_LLM_ANTHROPIC ? "anthropic" : "openai",
	                      "model", cfg->model, "temperature", cfg->temperature, "max_tokens", (int)cfg->max_tokens);
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

char *kgb_llm_request_body(const kgb_llm_config_t *cfg, const char *system, const char *user)
{
	json_t *msgs = json_array(), *o;
	if (cfg->api == KGB_LLM_ANTHROPIC) {
		json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", "user", "content", user));
		o = json_pack("{s:s,s:i,s:f,s:o}", "model", cfg->model, "max_tokens", (int)cfg->max_tokens, "temperature",
		              cfg->temperature, "messages", msgs);
		if (system && *system)
			json_object_set_new(o, "system", json_string(system));
	} else {
		if (system && *system)
			json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", "system", "content", system));
		json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", "user", "content", user));
		o = json_pack("{s:s,s:o,s:f,s:i}", "model", cfg->model, "messages", msgs, "temperature", cfg->temperature,
		              "max_tokens", (int)cfg->max_tokens);
	}
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

static int64_t count_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) && json_integer_value(v) >= 0 ? (int64_t)json_integer_value(v) : -1;
}

int kgb_llm_parse_answer(kgb_llm_api_t api, const char *body, size_t len, kgb_llm_answer_t *a, char *err,
                         size_t errlen)
{
	json_error_t je;
	json_t *root = json_loadb(body, len, 0, &je);
	int rc = -1;
	for (int k = 0; k < KGB_LLM_NUSAGE; k++)
		a->usage[k] = -1;
	if (!json_is_object(root)) {
		kgb_err(err, errlen, "the answer is not a JSON object (%s at byte %d of %zu)", root ? "not an object" : je.text,
		        root ? 0 : je.position, len);
		goto out;
	}
	json_t *u = json_object_get(root, "usage");
	if (api == KGB_LLM_ANTHROPIC) {
		json_t *content = json_object_get(root, "content");
		if (!json_is_array(content)) {
			kgb_err(err, errlen, "the answer has no \"content\" array");
			goto out;
		}
		char *text = kgb_xstrdup("");
		for (size_t i = 0; i < json_array_size(content); i++) {
			json_t *b = json_array_get(content, i);
			const char *t = json_string_value(json_object_get(b, "type"));
			const char *s = json_string_value(json_object_get(b, "text"));
			if (t && strcmp(t, "text") == 0 && s) {
				char *more = kgb_xasprintf("%s%s", text, s);
				free(text);
				text = more;
			}
		}
		a->content = text;
		const char *fr = json_string_value(json_object_get(root, "stop_reason"));
		a->finish_reason = kgb_xstrdup(fr ? fr : "");
		a->usage[KGB_LLM_IN] = count_of(u, "input_tokens");
		a->usage[KGB_LLM_OUT] = count_of(u, "output_tokens");
		a->usage[KGB_LLM_CACHE_W] = count_of(u, "cache_creation_input_tokens");
		a->usage[KGB_LLM_CACHE_R] = count_of(u, "cache_read_input_tokens");
	} else {
		json_t *ch = json_array_get(json_object_get(root, "choices"), 0);
		json_t *msg = json_object_get(ch, "message");
		const char *s = json_string_value(json_object_get(msg, "content"));
		if (!s) {
			kgb_err(err, errlen, "the answer has no choices[0].message.content string");
			goto out;
		}
		a->content = kgb_xstrdup(s);
		const char *fr = json_string_value(json_object_get(ch, "finish_reason"));
		a->finish_reason = kgb_xstrdup(fr ? fr : "");
		/* prompt_tokens counts the cached ones too: input is what was not read from the
		 * cache, so that input + cache_read is the prompt for either API */
		int64_t prompt = count_of(u, "prompt_tokens");
		int64_t cached = count_of(json_object_get(u, "prompt_tokens_details"), "cached_tokens");
		a->usage[KGB_LLM_IN] = prompt >= 0 && cached > 0 ? prompt - cached : prompt;
		a->usage[KGB_LLM_OUT] = count_of(u, "completion_tokens");
		a->usage[KGB_LLM_CACHE_R] = cached;
		a->usage[KGB_LLM_REASON] = count_of(json_object_get(u, "completion_tokens_details"), "reasoning_tokens");
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

double kgb_llm_retry_after(const char *v)
{
	while (*v == ' ' || *v == '\t')
		v++;
	char *end;
	double s = strtod(v, &end);
	if (end != v && isfinite(s) && s >= 0) {
		while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
			end++;
		if (!*end)
			return s;
	}
	time_t t = curl_getdate(v, NULL);
	if (t == (time_t)-1)
		return -1;
	double d = difftime(t, time(NULL));
	return d > 0 ? d : 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	xfer_t *x = arg;
	size_t len = size * n;
	if (x->rlen + len > MAX_BODY) {
		x->too_big = true;
		return 0;
	}
	if (x->rlen + len + 1 > x->rcap) {
		x->rcap = (x->rlen + len + 1) * 2;
		x->resp = kgb_xrealloc(x->resp, x->rcap);
	}
	memcpy(x->resp + x->rlen, p, len);
	x->rlen += len;
	x->resp[x->rlen] = '\0';
	return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	xfer_t *x = arg;
	size_t len = size * n;
	static const char key[] = "retry-after:";
	if (len > sizeof key - 1 && strncasecmp(p, key, sizeof key - 1) == 0) {
		char v[128];
		size_t k = len - (sizeof key - 1);
		k = k < sizeof v - 1 ? k : sizeof v - 1;
		memcpy(v, p + sizeof key - 1, k);
		v[k] = '\0';
		x->retry_after = kgb_llm_retry_after(v);
	}
	return len;
}

/* Replace every copy of key in s by "***" (s is heap, may be reallocated). */
static char *scrub(char *s, const char *key)
{
	if (!s || !key || strlen(key) < 4)
		return s;
	size_t kl = strlen(key);
	char *hit;
	while ((hit = strstr(s, key))) {
		char *t = kgb_xasprintf("%.*s***%s", (int)(hit - s), s, hit + kl);
		free(s);
		s = t;
	}
	return s;
}

static void xfer_start(const kgb_llm_config_t *cfg, CURLM *m, xfer_t *x)
{
	if (!x->h) {
		x->h = curl_easy_init();
		KGB_ASSERT(x->h != NULL);
		char *url = kgb_xasprintf("%s%s%s", cfg->base_url,
		                          cfg->base_url[0] && cfg->base_url[strlen(cfg->base_url) - 1] == '/' ? "" : "/",
		                          cfg->api == KGB_LLM_ANTHROPIC ? "messages" : "chat/completions");
		curl_easy_setopt(x->h, CURLOPT_URL, url);
		free(url);
		x->hdrs = curl_slist_append(x->hdrs, "Content-Type: application/json");
		if (cfg->api_key && *cfg->api_key) {
			char *h = cfg->api == KGB_LLM_ANTHROPIC ? kgb_xasprintf("x-api-key: %s", cfg->api_key)
			                                        : kgb_xasprintf("Authorization: Bearer %s", cfg->api_key);
			x->hdrs = curl_slist_append(x->hdrs, h);
			memset(h, 0, strlen(h));
			free(h);
		}
		if (cfg->api == KGB_LLM_ANTHROPIC)
			x->hdrs = curl_slist_append(x->hdrs, "anthropic-version: 2023-06-01");
		curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, x->hdrs);
		curl_easy_setopt(x->h, CURLOPT_POSTFIELDS, x->body);
		curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(x->h, CURLOPT_WRITEDATA, x);
		curl_easy_setopt(x->h, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(x->h, CURLOPT_HEADERDATA, x);
		curl_easy_setopt(x->h, CURLOPT_PRIVATE, x);
		curl_easy_setopt(x->h, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(x->h, CURLOPT_ERRORBUFFER, x->errbuf);
		curl_easy_setopt(x->h, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(x->h, CURLOPT_TIMEOUT_MS, (long)(cfg->timeout_s * 1000));
		curl_easy_setopt(x->h, CURLOPT_CONNECTTIMEOUT_MS, (long)KGB_MIN(cfg->timeout_s * 1000, 30000.0));
	}
	x->rlen = 0;
	x->too_big = false;
	x->retry_after = -1;
	x->errbuf[0] = '\0';
	x->due_ms = 0;
	x->a.attempts++;
	curl_multi_add_handle(m, x->h);
}

static void xfer_free(xfer_t *x)
{
	if (x->h)
		curl_easy_cleanup(x->h);
	curl_slist_free_all(x->hdrs);
	free(x->body);
	free(x->resp);
	free(x->a.content);
	free(x->a.finish_reason);
	free(x->a.error);
	free(x);
}

/* Judge a finished attempt: true when x is answered (success or a final error),
 * false to try again (then *wait_s is the backoff). */
static bool judge(const kgb_llm_config_t *cfg, xfer_t *x, CURLcode cc, double *wait_s)
{
	long status = 0;
	char err[512];
	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
	x->a.http_status = status;
	free(x->a.error);
	x->a.error = NULL;
	bool transient = false;
	if (cc != CURLE_OK) {
		x->a.error = kgb_xasprintf("transfer failed: %s%s%s", curl_easy_strerror(cc), x->errbuf[0] ? ": " : "",
		                           x->errbuf);
		transient = !x->too_big;
		if (x->too_big) {
			free(x->a.error);
			x->a.error = kgb_xasprintf("the answer is larger than %u MiB", MAX_BODY >> 20);
		}
	} else if (status == 429 || status >= 500) {
		x->a.error = kgb_xasprintf("HTTP %ld: %.200s", status, x->resp ? x->resp : "");
		transient = true;
	} else if (status < 200 || status >= 300) {
		x->a.error = kgb_xasprintf("HTTP %ld: %.300s", status, x->resp ? x->resp : "");
	} else {
		free(x->a.content);
		free(x->a.finish_reason);
		x->a.content = x->a.finish_reason = NULL;
		if (kgb_llm_parse_answer(cfg->api, x->resp ? x->resp : "", x->rlen, &x->a, err, sizeof err) != 0) {
			x->a.error = kgb_xasprintf("HTTP %ld: %s", status, err);
			transient = true;
		}
	}
	x->a.error = scrub(x->a.error, cfg->api_key);
	x->a.content = scrub(x->a.content, cfg->api_key);
	if (!transient || x->a.attempts >= cfg->max_attempts)
		return true;
	double b = cfg->backoff_s * pow(2, x->a.attempts - 1);
	b = KGB_MIN(b, cfg->backoff_cap_s);
	b *= 0.5 + (double)(rand() % 1000) / 2000.0; /* jitter: 50% to 100% */
	if (x->retry_after >= 0)
		b = KGB_MIN(x->retry_after, KGB_MAX(cfg->backoff_cap_s, 1.0) * 60);
	*wait_s = b;
	log_info("model API: attempt %u: %s; again in %.2f s", x->a.attempts, x->a.error, b);
	return false;
}

int kgb_llm_run(const kgb_llm_config_t *cfg, kgb_llm_next_fn next, kgb_llm_done_fn done, void *arg, char *err,
                size_t errlen)
{
	static bool inited;
	if (!inited) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		inited = true;
	}
	CURLM *m = curl_multi_init();
	if (!m)
		return kgb_err(err, errlen, "cannot make a curl multi handle");
	xfer_t *waiting = NULL;   /* backing off */
	size_t inflight = 0, nwaiting = 0;
	bool more = true;
	uint32_t conc = cfg->concurrency ? cfg->concurrency : 1;
	int rc = 0;
	while (more || inflight || nwaiting) {
		double now = kgb_now_ms();
		/* retries that are due */
		for (xfer_t **pp = &waiting; *pp;) {
			xfer_t *x = *pp;
			if (x->due_ms <= now && inflight < conc) {
				*pp = x->next;
				nwaiting--;
				xfer_start(cfg, m, x);
				inflight++;
			} else {
				pp = &x->next;
			}
		}
		while (more && inflight + nwaiting < conc) {
			const char *sys = NULL, *user = NULL;
			void *tag = NULL;
			if (!next(arg, &sys, &user, &tag)) {
				more = false;
				break;
			}
			xfer_t *x = kgb_xcalloc(1, sizeof *x);
			x->tag = tag;
			x->body = kgb_llm_request_body(cfg, sys, user);
			x->t0_ms = kgb_now_ms();
			xfer_start(cfg, m, x);
			inflight++;
		}
		int running = 0;
		CURLMcode mc = curl_multi_perform(m, &running);
		if (mc != CURLM_OK) {
			rc = kgb_err(err, errlen, "curl: %s", curl_multi_strerror(mc));
			break;
		}
		CURLMsg *msg;
		int left;
		while ((msg = curl_multi_info_read(m, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			xfer_t *x = NULL;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
			CURLcode cc = msg->data.result;
			curl_multi_remove_handle(m, x->h);
			inflight--;
			double wait_s = 0;
			if (judge(cfg, x, cc, &wait_s)) {
				x->a.wall_s = (kgb_now_ms() - x->t0_ms) / 1000.0;
				done(arg, x->tag, &x->a);
				xfer_free(x);
			} else {
				x->due_ms = kgb_now_ms() + wait_s * 1000;
				x->next = waiting;
				waiting = x;
				nwaiting++;
			}
		}
		/* sleep until a socket is ready, a retry is due, or 100 ms */
		int timeout = 100;
		now = kgb_now_ms();
		for (xfer_t *x = waiting; x; x = x->next)
			timeout = KGB_MIN(timeout, (int)KGB_MAX(0.0, x->due_ms - now));
		if (inflight)
			curl_multi_poll(m, NULL, 0, timeout, NULL);
		else if (nwaiting && timeout > 0) {
			struct timespec ts = {timeout / 1000, (long)(timeout % 1000) * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	while (waiting) {
		xfer_t *x = waiting;
		waiting = x->next;
		xfer_free(x);
	}
	curl_multi_cleanup(m);
	return rc;
}
