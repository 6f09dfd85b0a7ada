/* Tests for common/sdnotify.c: the datagram reaches a socket bound where NOTIFY_SOCKET
 * says (a path, and the abstract namespace), and nothing is sent without it. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sdnotify.h"
#include "test.h"

/* A datagram socket bound at name (a path, or "@x" for the abstract namespace). */
static int listen_at(const char *name)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		FAIL("socket: %s", strerror(errno));
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	size_t len = strlen(name);
	memcpy(sa.sun_path, name, len);
	if (name[0] == '@')
		sa.sun_path[0] = 0;
	socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '/'));
	if (bind(fd, (struct sockaddr *)&sa, salen) != 0)
		FAIL("bind %s: %s", name, strerror(errno));
	return fd;
}

static void expect_datagram(int fd, const char *want)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT);
	if (n < 0)
		FAIL("no datagram: %s", strerror(errno));
	buf[n] = 0;
	ASSERT_EQ_STR(buf, want);
}

TEST(sdnotify_path_abstract_and_unset)
{
	char dir[] = "/tmp/kgb-sdnotify-XXXXXX";
	if (!mkdtemp(dir))
		FAIL("mkdtemp: %s", strerror(errno));
	char path[128];
	snprintf(path, sizeof path, "%s/notify", dir);
	int fd = listen_at(path);
	setenv("NOTIFY_SOCKET", path, 1);
	ASSERT_EQ_INT(kgb_sd_notify("READY=1\nSTATUS=serving"), 1);
	expect_datagram(fd, "READY=1\nSTATUS=serving");
	close(fd);
	unlink(path);
	rmdir(dir);

	char abs[64];
	snprintf(abs, sizeof abs, "@kgb-sdnotify-test-%d", (int)getpid());
	fd = listen_at(abs);
	setenv("NOTIFY_SOCKET", abs, 1);
	ASSERT_EQ_INT(kgb_sd_notify("STOPPING=1"), 1);
	expect_datagram(fd, "STOPPING=1");
	close(fd);

	/* no listener there any more: an error, not a crash or a hang */
	ASSERT_EQ_INT(kgb_sd_notify("READY=1"), -1);
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	ASSERT_EQ_INT(kgb_sd_notify("READY=1"), -1);
	ASSERT_EQ_INT(errno, EINVAL);
	unsetenv("NOTIFY_SOCKET");
	ASSERT_EQ_INT(kgb_sd_notify("READY=1"), 0);
}
