/* Which coordinator a client reached: see cluster.h. */
#include "cluster.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

char *kgb_cluster_pin_file(void)
{
	const char *pin = getenv("KGB_CLUSTER_PIN");
	if (pin && strcmp(pin, "0") == 0)
		return NULL;
	const char *d = getenv("KGB_CONFIG_DIR");
	if (d && *d)
		return kgb_xasprintf("%s/clusters", d);
	d = getenv("XDG_CONFIG_HOME");
	if (d && *d)
		return kgb_xasprintf("%s/kgb/clusters", d);
	d = getenv("HOME");
	if (d && *d)
		return kgb_xasprintf("%s/.config/kgb/clusters", d);
	return NULL;
}

/* mkdir -p of path's directory */
static void make_dirs(const char *path)
{
	char *p = kgb_xstrdup(path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0700);
			*s = '/';
		}
	free(p);
}

int kgb_cluster_check(const char *endpoint, const char *got, char *err, size_t errlen)
{
	if (!got)
		got = "";
	const char *want = getenv("KGB_CLUSTER_ID");
	if (want && *want) {
		if (strcmp(want, got) == 0)
			return 0;
		if (!*got)
			return kgb_err(err, errlen,
			               "the coordinator at %s did not say its cluster id (a coordinator older than this "
			               "kgb), and KGB_CLUSTER_ID=%s asks for one",
			               endpoint, want);
		return kgb_err(err, errlen,
		               "the coordinator at %s is cluster %s, not KGB_CLUSTER_ID=%s: another coordinator (with "
		               "another store) answers there; check the endpoint",
		               endpoint, got, want);
	}
	if (!*got)
		return 0; /* an older coordinator and nothing asked for: nothing to compare */
	char *file = kgb_cluster_pin_file();
	if (!file)
		return 0;
	int rc = 0;
	FILE *f = fopen(file, "r");
	bool found = false;
	if (f) {
		char line[1024];
		unsigned ln = 0;
		while (!found && fgets(line, sizeof line, f)) {
			ln++;
			char ep[800], id[200];
			if (line[0] == '#' || sscanf(line, "%799s %199s", ep, id) != 2 || strcmp(ep, endpoint) != 0)
				continue;
			found = true;
			if (strcmp(id, got) != 0)
				rc = kgb_err(err, errlen,
				             "the coordinator at %s is cluster %s, but %s line %u pinned cluster %s to that "
				             "endpoint when it was first used: another coordinator (with another store) answers "
				             "there. If that store was made anew on purpose, delete the line; to talk to a "
				             "coordinator for one command, set KGB_CLUSTER_ID to its id",
				             endpoint, got, file, ln, id);
		}
		fclose(f);
	}
	if (!found) {
		make_dirs(file);
		int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd >= 0) {
			char *line = kgb_xasprintf("%s %s\n", endpoint, got);
			ssize_t w = write(fd, line, strlen(line));
			(void)w;
			free(line);
			close(fd);
		}
	}
	free(file);
	return rc;
}
