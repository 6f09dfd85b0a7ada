/* Tests for common/curve.c (keys, allowlists, endpoints, client settings) and the
 * decisions of the coordinator's ZAP handler (coordinator/zap.c). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zmq.h>

#include "curve.h"
#include "test.h"
#include "util.h"
#include "../../coordinator/zap.h"

typedef struct pair {
	char pub[41], sec[41];
	uint8_t raw[32];
} pair_t;

static void keypair(pair_t *p)
{
	ASSERT_EQ_INT(zmq_curve_keypair(p->pub, p->sec), 0);
	ASSERT_TRUE(zmq_z85_decode(p->raw, p->pub) != NULL);
}

TEST(curve_key_valid)
{
	pair_t k;
	keypair(&k);
	ASSERT_TRUE(kgb_curve_key_valid(k.pub, 40));
	ASSERT_TRUE(kgb_curve_key_valid(k.sec, 40));
	ASSERT_FALSE(kgb_curve_key_valid(k.pub, 39));
	ASSERT_FALSE(kgb_curve_key_valid("", 0));
	ASSERT_FALSE(kgb_curve_key_valid(NULL, 40));
	char bad[41];
	memcpy(bad, k.pub, 41);
	bad[7] = '~'; /* not in the Z85 alphabet */
	ASSERT_FALSE(kgb_curve_key_valid(bad, 40));
	bad[7] = ' ';
	ASSERT_FALSE(kgb_curve_key_valid(bad, 40));
}

TEST(curve_allow_parse_names_comments_and_lookup)
{
	pair_t a, b, c;
	keypair(&a);
	keypair(&b);
	keypair(&c);
	char *text = kgb_xasprintf("# workers of rack 12\n"
	                           "\n"
	                           "   %s   gpu-node-01\r\n"
	                           "%s\n"
	                           "\t# indented comment\n"
	                           "%s big box  # the one in the corner\n",
	                           a.pub, b.pub, c.pub);
	kgb_curve_allow_t *l = NULL;
	char err[512] = "";
	ASSERT_EQ_INT(kgb_curve_allow_parse(text, "workers.allow", &l, err, sizeof err), 0);
	ASSERT_EQ_INT(l->n, 3);
	const kgb_curve_entry_t *e = kgb_curve_allow_find(l, a.raw, 32);
	ASSERT_TRUE(e != NULL);
	ASSERT_EQ_STR(e->name, "gpu-node-01");
	ASSERT_EQ_STR(e->z85, a.pub);
	ASSERT_EQ_INT(e->line, 3);
	e = kgb_curve_allow_find(l, b.raw, 32);
	ASSERT_TRUE(e != NULL);
	ASSERT_EQ_STR(e->name, "");
	ASSERT_EQ_INT(e->line, 4);
	e = kgb_curve_allow_find(l, c.raw, 32);
	ASSERT_TRUE(e != NULL);
	ASSERT_EQ_STR(e->name, "big box");
	/* not listed, or not a key */
	pair_t d;
	keypair(&d);
	ASSERT_TRUE(kgb_curve_allow_find(l, d.raw, 32) == NULL);
	ASSERT_TRUE(kgb_curve_allow_find(l, a.raw, 31) == NULL);
	ASSERT_TRUE(kgb_curve_allow_find(NULL, a.raw, 32) == NULL);
	kgb_curve_allow_destroy(&l);
	ASSERT_TRUE(l == NULL);
	free(text);
}

TEST(curve_allow_parse_hash_line_is_a_comment)
{
	/* '#' is a Z85 digit, but the largest one: no 32-bit group, hence no key, starts
	 * with it, so a line starting with '#' is always a comment, even a key-like one */
	pair_t a;
	char pub[41];
	keypair(&a);
	memcpy(pub, a.pub, 41);
	pub[0] = '#';
	ASSERT_FALSE(kgb_curve_key_valid(pub, 40));
	char *text = kgb_xasprintf("%s commented out\n%s kept\n", pub, a.pub);
	kgb_curve_allow_t *l = NULL;
	char err[512] = "";
	ASSERT_EQ_INT(kgb_curve_allow_parse(text, "x.allow", &l, err, sizeof err), 0);
	ASSERT_EQ_INT(l->n, 1);
	const kgb_curve_entry_t *e = kgb_curve_allow_find(l, a.raw, 32);
	ASSERT_TRUE(e != NULL);
	ASSERT_EQ_STR(e->name, "kept");
	ASSERT_EQ_INT(e->line, 2);
	kgb_curve_allow_destroy(&l);
	free(text);
}

TEST(curve_allow_parse_errors)
{
	pair_t a;
	keypair(&a);
	kgb_curve_allow_t *l = NULL;
	char err[512] = "";

	char *t1 = kgb_xasprintf("%s w1\nnot-a-key w2\n", a.pub);
	ASSERT_EQ_INT(kgb_curve_allow_parse(t1, "workers.allow", &l, err, sizeof err), -1);
	ASSERT_TRUE(l == NULL);
	ASSERT_TRUE(strstr(err, "workers.allow:2:") != NULL);
	ASSERT_TRUE(strstr(err, "'not-a-key'") != NULL);

	/* a key one character short */
	char *t2 = kgb_xasprintf("%.39s\n", a.pub);
	ASSERT_EQ_INT(kgb_curve_allow_parse(t2, "u.allow", &l, err, sizeof err), -1);
	ASSERT_TRUE(strstr(err, "u.allow:1:") != NULL);

	/* the same key twice: both lines named */
	char *t3 = kgb_xasprintf("%s first\n# c\n%s again\n", a.pub, a.pub);
	ASSERT_EQ_INT(kgb_curve_allow_parse(t3, "dup.allow", &l, err, sizeof err), -1);
	ASSERT_TRUE(strstr(err, "dup.allow:3:") != NULL);
	ASSERT_TRUE(strstr(err, "line 1") != NULL);

	/* a secret key file given as an allowlist */
	char *t4 = kgb_xasprintf(KGB_CURVE_SECRET_MARK ". Keep it private.\n%s\n", a.sec);
	ASSERT_EQ_INT(kgb_curve_allow_parse(t4, "w1.key", &l, err, sizeof err), -1);
	ASSERT_TRUE(strstr(err, "secret key file") != NULL);

	/* empty and comment-only lists are valid and admit no one */
	ASSERT_EQ_INT(kgb_curve_allow_parse("# nobody yet\n\n", "e.allow", &l, err, sizeof err), 0);
	ASSERT_EQ_INT(l->n, 0);
	ASSERT_TRUE(kgb_curve_allow_find(l, a.raw, 32) == NULL);
	kgb_curve_allow_destroy(&l);

	/* a missing file names the file */
	ASSERT_EQ_INT(kgb_curve_allow_load("/nonexistent/kgb.allow", &l, err, sizeof err), -1);
	ASSERT_TRUE(strstr(err, "/nonexistent/kgb.allow") != NULL);
	free(t1);
	free(t2);
	free(t3);
	free(t4);
}

TEST(curve_key_load)
{
	pair_t a;
	keypair(&a);
	char err[512] = "", out[41];
	char *t = kgb_xasprintf(KGB_CURVE_SECRET_MARK ". Keep it private.\n%s\n", a.sec);
	const char *p = kgb_test_write_file("s.key", t);
	chmod(p, 0600);
	ASSERT_EQ_INT(kgb_curve_key_load(p, true, out, err, sizeof err), 0);
	ASSERT_EQ_STR(out, a.sec);
	char pub[41];
	ASSERT_EQ_INT(kgb_curve_public_of(out, pub, err, sizeof err), 0);
	ASSERT_EQ_STR(pub, a.pub);
	free(t);

	t = kgb_xasprintf("%s w1\n", a.pub);
	p = kgb_test_write_file("w1.pub", t);
	ASSERT_EQ_INT(kgb_curve_key_load(p, false, out, err, sizeof err), 0);
	ASSERT_EQ_STR(out, a.pub);
	free(t);

	p = kgb_test_write_file("empty.pub", "# nothing\n\n");
	ASSERT_EQ_INT(kgb_curve_key_load(p, false, out, err, sizeof err), -1);
	ASSERT_TRUE(strstr(err, "no key") != NULL);
	p = kgb_test_write_file("bad.pub", "hello world\n");
	ASSERT_EQ_INT(kgb_curve_key_load(p, false, out, err, sizeof err), -1);
	ASSERT_TRUE(strstr(err, "bad.pub:1:") != NULL);
	ASSERT_TRUE(strstr(err, "'hello'") != NULL);
}

TEST(curve_endpoint_is_local)
{
	ASSERT_TRUE(kgb_curve_endpoint_is_local("tcp://127.0.0.1:7710"));
	ASSERT_TRUE(kgb_curve_endpoint_is_local("tcp://127.1.2.3:7710"));
	ASSERT_TRUE(kgb_curve_endpoint_is_local("tcp://localhost:7710"));
	ASSERT_TRUE(kgb_curve_endpoint_is_local("tcp://[::1]:7710"));
	ASSERT_TRUE(kgb_curve_endpoint_is_local("tcp://lo:7710"));
	ASSERT_TRUE(kgb_curve_endpoint_is_local("ipc:///run/kgb/workers"));
	ASSERT_TRUE(kgb_curve_endpoint_is_local("inproc://x"));
	ASSERT_FALSE(kgb_curve_endpoint_is_local("tcp://*:7710"));
	ASSERT_FALSE(kgb_curve_endpoint_is_local("tcp://0.0.0.0:7710"));
	ASSERT_FALSE(kgb_curve_endpoint_is_local("tcp://10.0.0.5:7710"));
	ASSERT_FALSE(kgb_curve_endpoint_is_local("tcp://eth0:7710"));
	ASSERT_FALSE(kgb_curve_endpoint_is_local("tcp://127.example.com:7710"));
	ASSERT_FALSE(kgb_curve_endpoint_is_local("tcp://[::]:7710"));
	ASSERT_FALSE(kgb_curve_endpoint_is_local(NULL));
}

TEST(curve_client_from_env)
{
	pair_t srv, me, other;
	keypair(&srv);
	keypair(&me);
	keypair(&other);
	kgb_curve_client_t cc;
	char err[1024] = "";
	unsetenv("KGB_CURVE_SERVER_KEY");
	unsetenv("KGB_CURVE_SERVER_KEY_FILE");
	unsetenv("KGB_CURVE_SECRET_KEY_FILE");
	unsetenv("KGB_CURVE_PUBLIC_KEY_FILE");
	ASSERT_EQ_INT(kgb_curve_client_from_env(&cc, err, sizeof err), 0);
	ASSERT_FALSE(cc.on);

	setenv("KGB_CURVE_SERVER_KEY", srv.pub, 1);
	ASSERT_EQ_INT(kgb_curve_client_from_env(&cc, err, sizeof err), -1);
	ASSERT_TRUE(strstr(err, "KGB_CURVE_SECRET_KEY_FILE") != NULL);

	char *t = kgb_xasprintf(KGB_CURVE_SECRET_MARK ".\n%s\n", me.sec);
	char *sec = kgb_xstrdup(kgb_test_write_file("me.key", t));
	chmod(sec, 0600);
	setenv("KGB_CURVE_SECRET_KEY_FILE", sec, 1);
	ASSERT_EQ_INT(kgb_curve_client_from_env(&cc, err, sizeof err), 0);
	ASSERT_TRUE(cc.on);
	ASSERT_EQ_STR(cc.server, srv.pub);
	ASSERT_EQ_STR(cc.pub, me.pub);
	ASSERT_EQ_STR(cc.secret, me.sec);

	/* a public key file that does not match the secret key */
	char *op = kgb_xasprintf("%s\n", other.pub);
	setenv("KGB_CURVE_PUBLIC_KEY_FILE", kgb_test_write_file("other.pub", op), 1);
	ASSERT_EQ_INT(kgb_curve_client_from_env(&cc, err, sizeof err), -1);
	ASSERT_TRUE(strstr(err, "not the public key") != NULL);
	unsetenv("KGB_CURVE_PUBLIC_KEY_FILE");

	/* a bad server key names the variable */
	setenv("KGB_CURVE_SERVER_KEY", "short", 1);
	ASSERT_EQ_INT(kgb_curve_client_from_env(&cc, err, sizeof err), -1);
	ASSERT_TRUE(strstr(err, "KGB_CURVE_SERVER_KEY: 'short'") != NULL);
	/* both forms at once */
	setenv("KGB_CURVE_SERVER_KEY", srv.pub, 1);
	setenv("KGB_CURVE_SERVER_KEY_FILE", sec, 1);
	ASSERT_EQ_INT(kgb_curve_client_from_env(&cc, err, sizeof err), -1);
	ASSERT_TRUE(strstr(err, "both set") != NULL);
	free(t);
	free(op);
	free(sec);
}

TEST(curve_zap_decisions_and_reload)
{
	pair_t w1, w2, u1;
	keypair(&w1);
	keypair(&w2);
	keypair(&u1);
	char err[1024] = "";
	char *wt = kgb_xasprintf("%s w1\n", w1.pub);
	char *ut = kgb_xasprintf("%s alice\n", u1.pub);
	char *wpath = kgb_xstrdup(kgb_test_write_file("workers.allow", wt));
	char *upath = kgb_xstrdup(kgb_test_write_file("users.allow", ut));
	const kgb_zap_domain_t doms[2] = { { "workers", wpath }, { "cli", upath } };
	kgb_zap_t *z = kgb_zap_start(NULL, NULL, doms, 2, err, sizeof err);
	ASSERT_TRUE(z != NULL);
	kgb_zap_reply_t r;

	kgb_zap_decide(z, "workers", "10.0.0.7", "CURVE", w1.raw, 32, &r);
	ASSERT_EQ_STR(r.status, "200");
	ASSERT_EQ_STR(r.user, "w1");
	/* a user key is not a worker key, and the other way round */
	kgb_zap_decide(z, "workers", "10.0.0.7", "CURVE", u1.raw, 32, &r);
	ASSERT_EQ_STR(r.status, "400");
	kgb_zap_decide(z, "cli", "10.0.0.8", "CURVE", w1.raw, 32, &r);
	ASSERT_EQ_STR(r.status, "400");
	kgb_zap_decide(z, "cli", "10.0.0.8", "CURVE", u1.raw, 32, &r);
	ASSERT_EQ_STR(r.status, "200");
	ASSERT_EQ_STR(r.user, "alice");
	/* unknown domain, other mechanism, malformed key */
	kgb_zap_decide(z, "other", "10.0.0.9", "CURVE", w1.raw, 32, &r);
	ASSERT_EQ_STR(r.status, "400");
	kgb_zap_decide(z, "workers", "10.0.0.9", "NULL", NULL, 0, &r);
	ASSERT_EQ_STR(r.status, "400");
	kgb_zap_decide(z, "workers", "10.0.0.9", "CURVE", w1.raw, 31, &r);
	ASSERT_EQ_STR(r.status, "400");
	uint64_t acc, ref;
	kgb_zap_counts(z, &acc, &ref);
	ASSERT_EQ_U64(acc, 2);
	ASSERT_EQ_U64(ref, 5);

	/* w2 is refused until it is added and the lists are reloaded */
	kgb_zap_decide(z, "workers", "10.0.0.7", "CURVE", w2.raw, 32, &r);
	ASSERT_EQ_STR(r.status, "400");
	char *wt2 = kgb_xasprintf("%s w1\n%s w2\n", w1.pub, w2.pub);
	kgb_test_write_file("workers.allow", wt2);
	ASSERT_EQ_INT(kgb_zap_reload(z, err, sizeof err), 0);
	kgb_zap_decide(z, "workers", "10.0.0.7", "CURVE", w2.raw, 32, &r);
	ASSERT_EQ_STR(r.status, "200");
	ASSERT_EQ_STR(r.user, "w2");

	/* a broken list is refused and the old lists stay in force */
	kgb_test_write_file("users.allow", "garbage\n");
	ASSERT_EQ_INT(kgb_zap_reload(z, err, sizeof err), -1);
	ASSERT_TRUE(strstr(err, "users.allow:1:") != NULL);
	kgb_zap_decide(z, "cli", "10.0.0.8", "CURVE", u1.raw, 32, &r);
	ASSERT_EQ_STR(r.status, "200");
	kgb_zap_decide(z, "workers", "10.0.0.7", "CURVE", w2.raw, 32, &r);
	ASSERT_EQ_STR(r.status, "200");

	kgb_zap_close(&z);
	ASSERT_TRUE(z == NULL);
	free(wt);
	free(ut);
	free(wt2);
	free(wpath);
	free(upath);
}

/* A CLI allowlist line may end in a role (docs/security.md, "Users and roles"). */
TEST(curve_allow_roles)
{
	static const char text[] = "-X2*N)1^D]MJj3:G@{0$7#+N3wAjB)]7/<c{S]x& alice\n"
	                           ")E69aplL5gHHeNDp6S7hF}hl3Aaw}f&({CkF=d>I bob role=user\n"
	                           "^vAIjr$YW4N*>3B{KJRz7gZp%yLGPM&N4J47#48d  carol   role=admin  # ops\n";
	kgb_curve_allow_t *a = NULL;
	char err[512];
	ASSERT_OK(kgb_curve_allow_parse(text, "users.allow", &a, err, sizeof err), err);
	ASSERT_EQ_INT((int)a->n, 3);
	int admins = 0;
	for (size_t i = 0; i < a->n; i++) {
		const kgb_curve_entry_t *e = &a->v[i];
		ASSERT_TRUE(!strcmp(e->name, "alice") || !strcmp(e->name, "bob") || !strcmp(e->name, "carol"));
		ASSERT_EQ_INT(e->admin, !strcmp(e->name, "carol"));
		admins += e->admin;
	}
	ASSERT_EQ_INT(admins, 1);
	kgb_curve_allow_destroy(&a);
	ASSERT_EQ_INT(kgb_curve_allow_parse("-X2*N)1^D]MJj3:G@{0$7#+N3wAjB)]7/<c{S]x& eve role=root\n", "users.allow", &a,
	                                    err, sizeof err),
	              -1);
	ASSERT_CONTAINS(err, "users.allow:1: 'role=root' is not a role");
}
