/* A client of model APIs for `kgb generate` (docs/methods.md): OpenAI-compatible chat
 * completions and Anthropic messages, over libcurl's multi interface.
 *
 * Requests are pulled from the caller (next) while fewer than `concurrency` are in
 * flight and handed back answered (done), one at a time, on the calling thread. A 429,
 * a 5xx, a transfer error (timeout, connection, truncated body) or a 2xx whose body is
 * not the API's JSON is retried after a backoff (exponential with jitter, or the
 * Retry-After the server asked for) until max_attempts; any other status is final.
 * The API key goes only into the request's header: it is never logged, and any copy of
 * it in an answer's text or error is replaced by "***". */
#ifndef KGB_CLI_LLM_H
#define KGB_CLI_LLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { KGB_LLM_OPENAI = 0, KGB_LLM_ANTHROPIC = 1 } kgb_llm_api_t;

/* Kinds of usage, in the order of the manifest's "usage" keys and the store's
 * columns: input (not from a cache), output, cache write, cache read, reasoning. */
enum { KGB_LLM_IN = 0, KGB_LLM_OUT, KGB_LLM_CACHE_W, KGB_LLM_CACHE_R, KGB_LLM_REASON, KGB_LLM_NUSAGE };

typedef struct kgb_llm_config {
	kgb_llm_api_t api;
	const char *base_url;     /* "https://api.openai.com/v1": POST BASE/chat/completions or BASE/messages */
	const char *api_key;      /* may be NULL or "" (a local server needs none) */
	const char *model;
	double temperature;
	uint32_t max_tokens;
	double timeout_s;         /* one attempt, connect to last byte */
	uint32_t max_attempts;
	uint32_t concurrency;
	double backoff_s;         /* first backoff; doubled per attempt, at most backoff_cap_s */
	double backoff_cap_s;
} kgb_llm_config_t;

typedef struct kgb_llm_answer {
	long http_status;         /* of the last attempt; 0: no HTTP answer */
	uint32_t attempts;
	double wall_s;            /* first attempt's start to the answer, backoff included */
	int64_t usage[KGB_LLM_NUSAGE]; /* -1: not reported */
	char *content;            /* the answer's text; NULL when there is none */
	char *finish_reason;      /* "stop", "length", "end_turn", "max_tokens", ... or "" */
	char *error;              /* NULL on success, else why there is no answer */
} kgb_llm_answer_t;

/* Fill *system and *user (owned by the caller, valid until done is called for this
 * request) and *tag (handed back to done). Return false when there is nothing more to
 * ask now (the loop still finishes what is in flight). */
typedef bool (*kgb_llm_next_fn)(void *arg, const char **system, const char **user, void **tag);
/* An answered request. a and its strings belong to the client and are freed after
 * the call. */
typedef void (*kgb_llm_done_fn)(void *arg, void *tag, const kgb_llm_answer_t *a);

/* The request body (JSON, caller frees) that the client sends for one prompt. */
char *kgb_llm_request_body(const kgb_llm_config_t *cfg, const char *system, const char *user);
/* The parameters of cfg that shape an answer, as a JSON object text for the record
 * (api, model, temperature, max_tokens; never the key). Caller frees. */
char *kgb_llm_request_params(const kgb_llm_config_t *cfg);
/* Parse an API's 2xx body into a (content, finish_reason, usage). Returns 0, or -1
 * with err saying what is missing. Exposed for the unit tests. */
int kgb_llm_parse_answer(kgb_llm_api_t api, const char *body, size_t len, kgb_llm_answer_t *a, char *err,
                         size_t errlen);
/* Seconds a Retry-After header value asks for (delta seconds or an HTTP date), or -1. */
double kgb_llm_retry_after(const char *value);

/* Ask until next says there is nothing more and every request is answered. Returns 0,
 * or -1 with err when the transfer machinery itself fails (not for a failed request,
 * which is an answer with an error). */
int kgb_llm_run(const kgb_llm_config_t *cfg, kgb_llm_next_fn next, kgb_llm_done_fn done, void *arg, char *err,
                size_t errlen);

#endif
