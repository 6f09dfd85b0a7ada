/* Tests for cli/fetch.c against a one-connection HTTP server on a loopback port. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../cli/cli.h"
#include "manifest.h"
#include "test.h"
#include "util.h"

typedef struct server {
	int lfd;
	int port;
	const char *response;   /* the raw bytes sent back to the first connection */
	double delay_s;         /* wait this long before answering */
	pthread_t thread;
} server_t;

static void *serve(void *arg)
{
	server_t *s = arg;
	int fd = accept(s->lfd, NULL, NULL);
	if (fd < 0)
		return NULL;
	char req[4096];
	/* read the request head; the client sends nothing after it */
	size_t got = 0;
	while (got < sizeof req - 1) {
		ssize_t n = read(fd, req + got, sizeof req - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	if (s->delay_s > 0)
		usleep((useconds_t)(s->delay_s * 1e6));
	size_t len = strlen(s->response), off = 0;
	while (off < len) {
		ssize_t n = write(fd, s->response + off, len - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	return NULL;
}

static void server_start(server_t *s, const char *response, double delay_s)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof a;
	s->lfd = socket(AF_INET, SOCK_STREAM, 0);
	s->response = response;
	s->delay_s = delay_s;
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(s->lfd, 4) != 0)
		FAIL("cannot listen on a loopback port");
	getsockname(s->lfd, (struct sockaddr *)&a, &alen);
	s->port = ntohs(a.sin_port);
	pthread_create(&s->thread, NULL, serve, s);
}

static void server_stop(server_t *s)
{
	shutdown(s->lfd, SHUT_RDWR);
	pthread_join(s->thread, NULL);
	close(s->lfd);
}

static char *fetch_from(server_t *s, const char *path, size_t *len, char *err, size_t errlen)
{
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%d%s", s->port, path);
	return kgb_cli_fetch(url, len, err, errlen);
}

/* path fetched from a server that answers response (once, at once). */
static char *fetch_answered(const char *response, const char *path, size_t *len, char *err, size_t errlen)
{
	server_t s;
	server_start(&s, response, 0);
	char *body = fetch_from(&s, path, len, err, errlen);
	server_stop(&s);
	return body;
}

TEST(cli_fetch_ok)
{
	char err[512] = "";
	size_t len = 0;
	char *body = fetch_answered("HTTP/1.1 200 OK\r\nContent-Length: 11\r\nConnection: close\r\n\r\n__kernel x;",
	                            "/add.cl", &len, err, sizeof err);
	if (!body)
		FAIL("fetch: %s", err);
	ASSERT_EQ_INT(len, 11);
	ASSERT_EQ_STR(body, "__kernel x;");
	free(body);
}

TEST(cli_fetch_http_status)
{
	char err[512] = "";
	size_t len = 0;
	char *body = fetch_answered("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found",
	                            "/missing.cl", &len, err, sizeof err);
	ASSERT_TRUE(body == NULL);
	ASSERT_CONTAINS(err, "/missing.cl: HTTP status 404");
}

TEST(cli_fetch_size_limit)
{
	char err[512] = "";
	size_t len = 0;
	/* announced size over the limit */
	kgb_cli_fetch_config(5, 16);
	char *body = fetch_answered("HTTP/1.1 200 OK\r\nContent-Length: 40\r\nConnection: close\r\n\r\n"
	                            "0123456789012345678901234567890123456789",
	                            "/big", &len, err, sizeof err);
	ASSERT_TRUE(body == NULL);
	ASSERT_CONTAINS(err, "larger than the limit of 16 bytes");
	/* no length announced: the limit is enforced while reading */
	body = fetch_answered("HTTP/1.0 200 OK\r\n\r\n0123456789012345678901234567890123456789", "/big2", &len, err,
	                      sizeof err);
	ASSERT_TRUE(body == NULL);
	ASSERT_CONTAINS(err, "larger than the limit");
}

TEST(cli_fetch_timeout_and_refused)
{
	server_t s;
	char err[512] = "";
	size_t len = 0;
	kgb_cli_fetch_config(0.3, 1024);
	server_start(&s, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 1.5);
	double t0 = kgb_now_ms();
	char *body = fetch_from(&s, "/slow", &len, err, sizeof err);
	double took = kgb_now_ms() - t0;
	server_stop(&s);
	ASSERT_TRUE(body == NULL);
	ASSERT_CONTAINS(err, "timed out after 0.3s");
	ASSERT_TRUE(took < 1400);

	/* a closed port */
	server_start(&s, "", 0);
	int port = s.port;
	server_stop(&s);
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/x", port);
	ASSERT_TRUE(kgb_cli_fetch(url, &len, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, url);
}

TEST(cli_fetch_schemes)
{
	char err[512] = "";
	size_t len = 0;
	ASSERT_TRUE(kgb_cli_fetch("file:///etc/passwd", &len, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "only http:// and https:// URLs");
	ASSERT_TRUE(kgb_cli_fetch("ftp://example.com/a.cl", &len, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "ftp://example.com/a.cl");
}

static const char plan_body[] =
    "{\"kernels\": [{\"entry\": \"add1\", \"lang\": \"opencl\", \"source\": \"add.cl\","
    " \"grid\": [\"cdiv(out.numel, 64)\"], \"block\": [\"64\"],"
    " \"args\": [{\"tensor\": \"self\"}, {\"tensor\": \"other\"}, {\"tensor\": \"out\"},"
    " {\"scalar\": \"alpha\", \"type\": \"f32\"}, {\"scalar\": \"out.numel\"}]}]}";

static const char *url_manifest(int port)
{
	char *m = kgb_xasprintf(
	    "{\"name\": \"u\", \"operators\": [\"add\"], \"methods\": [{\"name\": \"m\", \"candidates\": [\n"
	    " {\"operator\": \"add\", \"plan\": {\"url\": \"http://127.0.0.1:%d/p/add.plan.json\"},\n"
	    "  \"sources\": {\"add.cl\": {\"inline\": \"__kernel void add1() {}\"}}}]}]}\n", port);
	const char *path = kgb_test_write_file("u.json", m);
	free(m);
	return path;
}

TEST(cli_fetch_manifest_plan_by_url)
{
	server_t s;
	char err[1024] = "";
	kgb_manifest_t *m = NULL;
	char *resp = kgb_xasprintf("HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
	                           strlen(plan_body), plan_body);
	server_start(&s, resp, 0);
	const char *path = url_manifest(s.port);
	int rc = kgb_cli_load_manifest(path, 0, &m, err, sizeof err);
	server_stop(&s);
	free(resp);
	ASSERT_OK(rc, err);
	ASSERT_EQ_INT(m->ncandidates, 1);
	ASSERT_CONTAINS(m->candidates[0].plan_json, "add1");
	kgb_manifest_destroy(&m);

	/* the plan's URL answers 404: the error names the candidate and the URL */
	server_start(&s, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", 0);
	path = url_manifest(s.port);
	rc = kgb_cli_load_manifest(path, 0, &m, err, sizeof err);
	server_stop(&s);
	ASSERT_EQ_INT(rc, -1);
	ASSERT_TRUE(m == NULL);
	ASSERT_CONTAINS(err, "/p/add.plan.json");
	ASSERT_CONTAINS(err, "404");
}
