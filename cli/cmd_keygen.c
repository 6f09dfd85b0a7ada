/* kgb keygen: a CURVE key pair for the coordinator, a worker or a user
 * (docs/security.md). No coordinator needed. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "cli.h"
#include "curve.h"
#include "util.h"

/* Write text to path with mode; refuses to replace an existing file unless force.
 * Returns 0 or -1 with err. */
static int write_key_file(const char *path, const char *text, mode_t mode, bool force, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), mode);
	if (fd < 0) {
		if (errno == EEXIST)
			return kgb_err(err, errlen, "%s already exists (--force replaces it)", path);
		return kgb_err(err, errlen, "cannot create %s: %s", path, strerror(errno));
	}
	int rc = 0;
	/* a replaced file keeps its old mode: set ours */
	if (fchmod(fd, mode) != 0)
		rc = kgb_err(err, errlen, "cannot set the mode of %s: %s", path, strerror(errno));
	if (rc == 0 && kgb_write_all(fd, text, strlen(text)) != 0)
		rc = kgb_err(err, errlen, "cannot write %s: %s", path, strerror(errno));
	if (fsync(fd) != 0 && rc == 0)
		rc = kgb_err(err, errlen, "cannot write %s: %s", path, strerror(errno));
	if (close(fd) != 0 && rc == 0)
		rc = kgb_err(err, errlen, "cannot write %s: %s", path, strerror(errno));
	return rc;
}

/* kgb keygen [--out PREFIX] [--name NAME] [--force]. */
int kgb_cli_cmd_keygen(int argc, char **argv, kgb_cli_global_t *g)
{
	const char *prefix = "kgb-curve";
	const char *name = NULL;
	bool force = false;
	const kgb_cli_opt_t opts[] = {
		{ "out", 'o', KGB_CLI_OPT_STRING, &prefix, "PREFIX",
		  "write PREFIX.key (secret, mode 0600) and PREFIX.pub (default kgb-curve)" },
		{ "name", 'n', KGB_CLI_OPT_STRING, &name, "NAME",
		  "a name after the key in PREFIX.pub, kept when the line is added to an allowlist" },
		{ "force", 'f', KGB_CLI_OPT_FLAG, &force, NULL, "replace existing files" },
	};
	const kgb_cli_spec_t spec = {
		.name = "keygen",
		.usage = "[--out PREFIX] [--name NAME] [--force]",
		.summary = "Make a CURVE key pair (Z85) for the coordinator, a worker or a user, and print\n"
		           "the public key. The coordinator's secret key goes to KGB_CURVE_SECRET_KEY_FILE\n"
		           "and its public key to the others' KGB_CURVE_SERVER_KEY; a worker's or user's\n"
		           "PREFIX.pub line goes into the coordinator's KGB_CURVE_WORKERS_FILE or\n"
		           "KGB_CURVE_USERS_FILE, its PREFIX.key to its own KGB_CURVE_SECRET_KEY_FILE.\n"
		           "See docs/security.md.",
		KGB_CLI_OPTS(opts),
	};
	char pub[KGB_CURVE_Z85_LEN + 1], sec[KGB_CURVE_Z85_LEN + 1], err[512];
	char *keyfile = NULL, *pubfile = NULL, *keytext = NULL, *pubtext = NULL;

	int rc = kgb_cli_parse_args(&spec, argc, argv, g, NULL, NULL, NULL, 0);
	if (rc >= 0)
		return rc;
	if (!*prefix) {
		fprintf(stderr, "kgb keygen: --out: empty prefix\n");
		return KGB_CLI_EXIT_USAGE;
	}
	if (name) {
		for (const char *c = name; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == '#') {
				fprintf(stderr, "kgb keygen: --name: '%s' has a control character or a '#'\n", name);
				return KGB_CLI_EXIT_USAGE;
			}
	}
	if (!zmq_has("curve")) {
		fprintf(stderr, "kgb keygen: this libzmq was built without CURVE support\n");
		return KGB_CLI_EXIT_USAGE;
	}
	if (zmq_curve_keypair(pub, sec) != 0) {
		fprintf(stderr, "kgb keygen: zmq_curve_keypair: %s\n", zmq_strerror(zmq_errno()));
		return KGB_CLI_EXIT_USAGE;
	}
	keyfile = kgb_xasprintf("%s.key", prefix);
	pubfile = kgb_xasprintf("%s.pub", prefix);
	keytext = kgb_xasprintf(KGB_CURVE_SECRET_MARK ". Keep it private; its public key is in %s.\n%s\n",
	                        pubfile, sec);
	pubtext = kgb_xasprintf("%s%s%s\n", pub, name && *name ? " " : "", name ? name : "");
	rc = KGB_CLI_EXIT_USAGE;
	if (write_key_file(keyfile, keytext, 0600, force, err, sizeof err) != 0) {
		fprintf(stderr, "kgb keygen: %s\n", err);
		goto out;
	}
	if (write_key_file(pubfile, pubtext, 0644, force, err, sizeof err) != 0) {
		fprintf(stderr, "kgb keygen: %s\n", err);
		unlink(keyfile); /* no half pair left behind */
		goto out;
	}
	fprintf(stderr, "kgb keygen: wrote %s (secret, mode 0600) and %s\n", keyfile, pubfile);
	printf("%s\n", pub);
	rc = KGB_CLI_OK;
out:
	memset(sec, 0, sizeof sec);
	if (keytext)
		memset(keytext, 0, strlen(keytext));
	free(keytext);
	free(pubtext);
	free(keyfile);
	free(pubfile);
	return rc;
}
