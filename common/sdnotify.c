/* See sdnotify.h. The protocol is one datagram of newline-separated VAR=VALUE
 * assignments to the socket in NOTIFY_SOCKET (sd_notify(3)). */
#include "sdnotify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int kgb_sd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	if (!path || !*path)
		return 0;
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	size_t len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof sa.sun_path) {
		errno = EINVAL;
		return -1;
	}
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = 0; /* the abstract namespace */
	socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	ssize_t n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (const struct sockaddr *)&sa, salen);
	int e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	return 1;
}
