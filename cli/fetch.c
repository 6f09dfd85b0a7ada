/* Fetching manifest plans and sources by URL (libcurl), with bounded time and size. */
#include <string.h>
#include <curl/curl.h>

#include "cli.h"
#include "util.h"

static double fetch_timeout_s = 30.0;
static size_t fetch_max_bytes = 64u << 20;

typedef struct fetch_buf {
	char *p;
	size_t len, cap, max;
	bool too_big;
} fetch_buf_t;

/* Set the fetch limits; see cli.h. */
void kgb_cli_fetch_config(double timeout_s, size_t max_bytes)
{
	if (timeout_s > 0)
		fetch_timeout_s = timeout_s;
	if (max_bytes > 0)
		fetch_max_bytes = max_bytes;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *user)
{
	fetch_buf_t *b = user;
	size_t n = size * nmemb;

	if (n > b->max - b->len) {
		b->too_big = true;
		return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = KGB_MAX(b->cap * 2, b->len + n + 1);
		b->cap = KGB_MIN(cap, b->max + 1);
		b->p = kgb_xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

static void curl_init_once(void)
{
	static bool done;
	if (!done) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		done = true;
	}
}

/* GET a URL into memory; see cli.h. */
char *kgb_cli_fetch(const char *url, size_t *len, char *err, size_t errlen)
{
	fetch_buf_t b = { .max = fetch_max_bytes };
	char cerr[CURL_ERROR_SIZE] = "";
	long status = 0;
	curl_off_t declared = -1;
	CURL *h = NULL;
	char *out = NULL;

	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
		kgb_err(err, errlen, "%s: only http:// and https:// URLs can be fetched", url);
		goto out;
	}
	curl_init_once();
	h = curl_easy_init();
	if (!h) {
		kgb_err(err, errlen, "%s: cannot initialise libcurl", url);
		goto out;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(fetch_timeout_s * 1000.0));
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(KGB_MIN(fetch_timeout_s, 10.0) * 1000.0));
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)fetch_max_bytes);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "kgb/" KGB_VERSION);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);

	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared);
	if (b.too_big || rc == CURLE_FILESIZE_EXCEEDED) {
		kgb_err(err, errlen, "%s: larger than the limit of %zu bytes", url, fetch_max_bytes);
		goto out;
	}
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		kgb_err(err, errlen, "%s: timed out after %gs", url, fetch_timeout_s);
		goto out;
	}
	if (rc != CURLE_OK) {
		kgb_err(err, errlen, "%s: %s", url, cerr[0] ? cerr : curl_easy_strerror(rc));
		goto out;
	}
	if (status < 200 || status > 299) {
		kgb_err(err, errlen, "%s: HTTP status %ld", url, status);
		goto out;
	}
	if (declared >= 0 && (curl_off_t)b.len != declared) {
		kgb_err(err, errlen, "%s: got %zu bytes of the %lld announced", url, b.len,
		        (long long)declared);
		goto out;
	}
	if (!b.p)
		b.p = kgb_xstrdup("");
	out = b.p;
	b.p = NULL;
	*len = b.len;
out:
	free(b.p);
	if (h)
		curl_easy_cleanup(h);
	return out;
}
