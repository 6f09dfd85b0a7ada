/* Private PostgreSQL cluster: see embedded.h. */
#include "embedded.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <postgresql/libpq-fe.h> /* Debian: pkg-config --cflags libpq */
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define PG_PORT "5432"
#define ROOT_BASE "/var/lib/kgb"

struct kgb_embedded {
	pid_t pid;
	char bindir[PATH_MAX];
	char base[PATH_MAX];      /* holds data/ and run/ */
	char pgdata[PATH_MAX];
	char sockdir[PATH_MAX];
	char logfile[PATH_MAX];
	bool as_postgres;
	uid_t uid;
	gid_t gid;
	bool exited;
};

/* snprintf for paths: a path that does not fit is a fatal configuration error. */
static void __attribute__((format(printf, 3, 4))) pathf(char *dst, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vsnprintf(dst, n, fmt, ap);
	va_end(ap);
	KGB_ASSERT_MSG(r >= 0 && (size_t)r < n, "path too long: %s", dst);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static bool is_exec(const char *dir, const char *name)
{
	char p[PATH_MAX];
	pathf(p, sizeof p, "%s/%s", dir, name);
	return access(p, X_OK) == 0;
}

/* Server binaries: $KGB_PG_BINDIR, else pg_config --bindir, else the newest
 * /usr/lib/postgresql/N/bin. */
static int find_bindir(char *out, size_t n, char *err, size_t errlen)
{
	const char *conf = getenv("KGB_PG_BINDIR");
	if (conf && *conf) {
		if (!is_exec(conf, "initdb") || !is_exec(conf, "postgres"))
			return kgb_err(err, errlen, "embedded store: KGB_PG_BINDIR=%s holds no executable initdb and postgres",
			               conf);
		kgb_strlcpy(out, conf, n);
		return 0;
	}
	FILE *f = popen("pg_config --bindir 2>/dev/null", "r");
	if (f) {
		char line[PATH_MAX] = "";
		if (fgets(line, sizeof line, f)) {
			line[strcspn(line, "\n")] = 0;
			if (line[0] && is_exec(line, "initdb") && is_exec(line, "postgres")) {
				pclose(f);
				kgb_strlcpy(out, line, n);
				return 0;
			}
		}
		pclose(f);
	}
	glob_t g;
	int best = -1;
	if (glob("/usr/lib/postgresql/*/bin", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			int v = atoi(g.gl_pathv[i] + strlen("/usr/lib/postgresql/"));
			if (v > best && is_exec(g.gl_pathv[i], "initdb") && is_exec(g.gl_pathv[i], "postgres")) {
				best = v;
				kgb_strlcpy(out, g.gl_pathv[i], n);
			}
		}
		globfree(&g);
	}
	if (best < 0)
		return kgb_err(err, errlen,
		               "embedded store: no PostgreSQL server binaries (initdb, postgres) found via "
		               "pg_config --bindir or in /usr/lib/postgresql/*/bin; install the postgresql "
		               "package or set KGB_DATABASE_URL");
	return 0;
}

/* fork + exec argv with stdout/stderr to the log file, as the cluster owner. With
 * deathsig, the child gets SIGINT (fast shutdown) if the coordinator dies. Returns the
 * pid or -1. */
static pid_t spawn(kgb_embedded_t *e, char *const argv[], bool deathsig, char *err, size_t errlen)
{
	int logfd = open(e->logfile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (logfd < 0) {
		kgb_err(err, errlen, "embedded store: %s: %s", e->logfile, strerror(errno));
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		kgb_err(err, errlen, "embedded store: fork: %s", strerror(errno));
		close(logfd);
		return -1;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		setpgid(0, 0); /* keep the terminal's ^C away: the coordinator stops it */
		if (e->as_postgres) {
			if (setgroups(0, NULL) != 0 || setgid(e->gid) != 0 || setuid(e->uid) != 0) {
				dprintf(2, "kgb-coordinator: cannot switch to user postgres: %s\n", strerror(errno));
				_exit(126);
			}
		}
		if (deathsig) {
			prctl(PR_SET_PDEATHSIG, SIGINT);
			if (getppid() != parent)
				_exit(1);
		}
		if (chdir(e->base) != 0)
			(void)!chdir("/");
		/* argv[0] is the full path too: initdb and postgres find their sibling
		 * programs from it, and a bare name would send them searching PATH (where a
		 * stock Debian or Ubuntu has neither) */
		char path[PATH_MAX];
		pathf(path, sizeof path, "%s/%s", e->bindir, argv[0]);
		size_t n = 0;
		while (argv[n])
			n++;
		char **av = calloc(n + 1, sizeof *av);
		if (!av)
			_exit(127);
		av[0] = path;
		for (size_t i = 1; i < n; i++)
			av[i] = argv[i];
		execv(path, av);
		dprintf(2, "kgb-coordinator: exec %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	close(logfd);
	return pid;
}

static int wait_child(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int prepare_dir(kgb_embedded_t *e, const char *path, int mode, char *err, size_t errlen)
{
	if (kgb_mkdirs(path, mode) != 0)
		return kgb_err(err, errlen, "embedded store: mkdir %s: %s", path, strerror(errno));
	if (e->as_postgres && chown(path, e->uid, e->gid) != 0)
		return kgb_err(err, errlen, "embedded store: chown %s to postgres: %s", path, strerror(errno));
	if (chmod(path, (mode_t)mode) != 0)
		return kgb_err(err, errlen, "embedded store: chmod %s: %s", path, strerror(errno));
	return 0;
}

/* Is pid a live (non-zombie) process? */
static bool alive(pid_t pid)
{
	if (pid <= 0 || kill(pid, 0) != 0)
		return errno == EPERM;
	char p[64], buf[512];
	pathf(p, sizeof p, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return true;
	bool zombie = false;
	if (fgets(buf, sizeof buf, f)) {
		char *rp = strrchr(buf, ')');
		if (rp && rp[1] == ' ' && rp[2] == 'Z')
			zombie = true;
	}
	fclose(f);
	return !zombie;
}

static bool is_postgres(pid_t pid)
{
	char p[64], buf[256] = "";
	pathf(p, sizeof p, "/proc/%d/comm", (int)pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return false;
	bool r = fgets(buf, sizeof buf, f) && (strncmp(buf, "postgres", 8) == 0 || strncmp(buf, "postmaster", 10) == 0);
	fclose(f);
	return r;
}

/* A postmaster.pid left behind: a server of an earlier coordinator that was killed
 * (still running: shut it down) or a dead one (remove the stale lock files). */
static void clear_stale(kgb_embedded_t *e)
{
	char pidfile[PATH_MAX + 32];
	pathf(pidfile, sizeof pidfile, "%s/postmaster.pid", e->pgdata);
	FILE *f = fopen(pidfile, "r");
	if (!f)
		return;
	long pid = 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	if (pid > 0 && pid != getpid() && alive((pid_t)pid) && is_postgres((pid_t)pid)) {
		log_warn("embedded store: a server from an earlier run is still up (pid %ld); shutting it down", pid);
		kill((pid_t)pid, SIGINT);
		for (int i = 0; i < 300 && alive((pid_t)pid); i++)
			sleep_ms(100);
		if (alive((pid_t)pid)) {
			kill((pid_t)pid, SIGQUIT);
			for (int i = 0; i < 50 && alive((pid_t)pid); i++)
				sleep_ms(100);
		}
	}
	if (pid > 0 && alive((pid_t)pid) && is_postgres((pid_t)pid))
		return; /* let postgres itself report it */
	log_info("embedded store: removing the stale lock file of a stopped server (pid %ld)", pid);
	unlink(pidfile);
	char lock[PATH_MAX + 32];
	pathf(lock, sizeof lock, "%s/.s.PGSQL." PG_PORT ".lock", e->sockdir);
	unlink(lock);
	pathf(lock, sizeof lock, "%s/.s.PGSQL." PG_PORT, e->sockdir);
	unlink(lock);
}

static int layout(kgb_embedded_t *e, const char *datadir, char *err, size_t errlen)
{
	if (kgb_mkdirs(datadir, 0700) != 0)
		return kgb_err(err, errlen, "data dir %s: %s", datadir, strerror(errno));
	char real[PATH_MAX];
	if (!realpath(datadir, real))
		return kgb_err(err, errlen, "data dir %s: %s", datadir, strerror(errno));
	if (geteuid() == 0) {
		/* PostgreSQL refuses root: run it as KGB_PG_USER, else postgres (the
		 * package's user), else nobody (a machine with server binaries carried in) */
		const char *want = getenv("KGB_PG_USER");
		struct passwd *pw = getpwnam(want && *want ? want : "postgres");
		if (!pw && !(want && *want)) {
			pw = getpwnam("nobody");
			if (pw)
				log_info("embedded store: no 'postgres' user; the server runs as 'nobody' (set KGB_PG_USER to "
				         "choose)");
		}
		if (!pw)
			return kgb_err(err, errlen,
			               "embedded store: PostgreSQL refuses to run as root and there is no '%s' user to run it "
			               "as (install the postgresql package, set KGB_PG_USER, or set KGB_DATABASE_URL)",
			               want && *want ? want : "postgres");
		e->as_postgres = true;
		e->uid = pw->pw_uid;
		e->gid = pw->pw_gid;
		char hex[65];
		kgb_sha256_hex(real, strlen(real), hex);
		hex[12] = 0;
		if (kgb_mkdirs(ROOT_BASE, 0755) != 0)
			return kgb_err(err, errlen, "embedded store: mkdir " ROOT_BASE ": %s", strerror(errno));
		struct stat st;
		/* the postgres user must be able to traverse to its cluster */
		if (stat(ROOT_BASE, &st) == 0 && st.st_uid == 0 && (st.st_mode & 0011) != 0011)
			chmod(ROOT_BASE, (st.st_mode & 07777) | 0711);
		pathf(e->base, sizeof e->base, ROOT_BASE "/pg-%s", hex);
		char loc[PATH_MAX + 16];
		pathf(loc, sizeof loc, "%s/pg.location", real);
		char line[PATH_MAX + 2];
		int n = snprintf(line, sizeof line, "%s\n", e->base);
		if (kgb_write_file_atomic(loc, line, (size_t)n) != 0)
			return kgb_err(err, errlen, "embedded store: %s: %s", loc, strerror(errno));
	} else {
		pathf(e->base, sizeof e->base, "%s/pg", real);
	}
	if (prepare_dir(e, e->base, 0700, err, errlen) != 0)
		return -1;
	pathf(e->pgdata, sizeof e->pgdata, "%s/data", e->base);
	pathf(e->sockdir, sizeof e->sockdir, "%s/run", e->base);
	if (strlen(e->sockdir) + strlen("/.s.PGSQL." PG_PORT ".lock") >= 100) {
		char hex[65];
		kgb_sha256_hex(real, strlen(real), hex);
		hex[12] = 0;
		pathf(e->sockdir, sizeof e->sockdir, "/tmp/kgb-pg-%d-%s", (int)geteuid(), hex);
	}
	if (prepare_dir(e, e->sockdir, 0700, err, errlen) != 0)
		return -1;
	pathf(e->logfile, sizeof e->logfile, "%s/postgres.log", real);
	return 0;
}

static int initdb(kgb_embedded_t *e, char *err, size_t errlen)
{
	char ver[PATH_MAX + 16];
	pathf(ver, sizeof ver, "%s/PG_VERSION", e->pgdata);
	if (access(ver, F_OK) == 0)
		return 0;
	/* a half-made cluster from an interrupted initdb: start over */
	DIR *d = opendir(e->pgdata);
	if (d) {
		struct dirent *de;
		bool empty = true;
		while ((de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				empty = false;
		closedir(d);
		if (!empty)
			return kgb_err(err, errlen,
			               "embedded store: %s exists, is not empty and holds no cluster "
			               "(no PG_VERSION); move it away", e->pgdata);
	}
	if (prepare_dir(e, e->pgdata, 0700, err, errlen) != 0)
		return -1;
	log_info("embedded store: initdb %s", e->pgdata);
	char *argv[] = {"initdb", "-D", e->pgdata, "-U", "kgb", "-A", "trust", "-E", "UTF8",
	                "--locale=C", "--no-instructions", NULL};
	pid_t pid = spawn(e, argv, false, err, errlen);
	if (pid < 0)
		return -1;
	int rc = wait_child(pid);
	if (rc != 0)
		return kgb_err(err, errlen, "embedded store: initdb %s failed (status %d); see %s", e->pgdata,
		               rc, e->logfile);
	return 0;
}

static int create_db(kgb_embedded_t *e, char *err, size_t errlen)
{
	char ci[PATH_MAX + 64];
	pathf(ci, sizeof ci, "host=%s port=" PG_PORT " user=kgb dbname=postgres", e->sockdir);
	PGconn *c = PQconnectdb(ci);
	int rc = -1;
	PGresult *r = NULL;
	if (PQstatus(c) != CONNECTION_OK) {
		kgb_err(err, errlen, "embedded store: connect: %s", PQerrorMessage(c));
		goto out;
	}
	r = PQexec(c, "SELECT 1 FROM pg_database WHERE datname = 'kgb'");
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		kgb_err(err, errlen, "embedded store: %s", PQresultErrorMessage(r));
		goto out;
	}
	if (PQntuples(r) == 0) {
		PQclear(r);
		r = PQexec(c, "CREATE DATABASE kgb");
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			kgb_err(err, errlen, "embedded store: CREATE DATABASE kgb: %s", PQresultErrorMessage(r));
			goto out;
		}
		log_info("embedded store: created database kgb");
	}
	rc = 0;
out:
	if (r)
		PQclear(r);
	PQfinish(c);
	return rc;
}

int kgb_embedded_start(const char *datadir, kgb_embedded_t **out, char *conninfo, size_t conninfo_len,
                       char *err, size_t errlen)
{
	kgb_embedded_t *e = kgb_xcalloc(1, sizeof *e);
	*out = NULL;
	if (find_bindir(e->bindir, sizeof e->bindir, err, errlen) != 0)
		goto fail;
	if (layout(e, datadir, err, errlen) != 0)
		goto fail;
	if (initdb(e, err, errlen) != 0)
		goto fail;
	clear_stale(e);
	char sockopt[PATH_MAX + 32];
	pathf(sockopt, sizeof sockopt, "unix_socket_directories=%s", e->sockdir);
	char *argv[] = {"postgres", "-D", e->pgdata, "-c", "listen_addresses=", "-c", sockopt,
	                "-c", "port=" PG_PORT, "-c", "logging_collector=off", NULL};
	e->pid = spawn(e, argv, true, err, errlen);
	if (e->pid < 0) {
		e->pid = 0;
		goto fail;
	}
	log_info("embedded store: postgres pid %d, cluster %s, socket %s, log %s", (int)e->pid, e->pgdata,
	         e->sockdir, e->logfile);
	char ping[PATH_MAX + 64];
	pathf(ping, sizeof ping, "host=%s port=" PG_PORT " user=kgb dbname=postgres connect_timeout=2",
	         e->sockdir);
	bool up = false;
	for (int i = 0; i < 600; i++) {
		int st;
		pid_t w = waitpid(e->pid, &st, WNOHANG);
		if (w == e->pid) {
			e->pid = 0;
			kgb_err(err, errlen, "embedded store: postgres exited at start (status %d); see %s",
			        WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), e->logfile);
			goto fail;
		}
		if (PQping(ping) == PQPING_OK) {
			up = true;
			break;
		}
		sleep_ms(100);
	}
	if (!up) {
		kgb_err(err, errlen, "embedded store: postgres did not accept connections within 60 s; see %s",
		        e->logfile);
		goto fail;
	}
	if (create_db(e, err, errlen) != 0)
		goto fail;
	snprintf(conninfo, conninfo_len, "host=%s port=" PG_PORT " user=kgb dbname=kgb", e->sockdir);
	*out = e;
	return 0;
fail:
	kgb_embedded_stop(&e);
	return -1;
}

pid_t kgb_embedded_pid(const kgb_embedded_t *e)
{
	return e ? e->pid : 0;
}

int kgb_embedded_check(kgb_embedded_t *e)
{
	if (!e || e->pid <= 0)
		return -1;
	int st;
	pid_t w = waitpid(e->pid, &st, WNOHANG);
	if (w == e->pid) {
		log_error("embedded store: postgres (pid %d) exited (status %d); see %s", (int)e->pid,
		          WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), e->logfile);
		e->pid = 0;
		return -1;
	}
	return 0;
}

void kgb_embedded_stop(kgb_embedded_t **pe)
{
	kgb_embedded_t *e = *pe;
	if (!e)
		return;
	*pe = NULL;
	if (e->pid > 0) {
		kill(e->pid, SIGINT);
		int st;
		bool gone = false;
		for (int i = 0; i < 300; i++) {
			pid_t w = waitpid(e->pid, &st, WNOHANG);
			if (w == e->pid || (w < 0 && errno == ECHILD)) {
				gone = true;
				break;
			}
			sleep_ms(100);
		}
		if (!gone) {
			log_warn("embedded store: postgres did not stop within 30 s; sending SIGQUIT");
			kill(e->pid, SIGQUIT);
			waitpid(e->pid, &st, 0);
		}
		log_info("embedded store: postgres stopped");
	}
	free(e);
}
