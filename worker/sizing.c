/* See sizing.h. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend_common.h"
#include "sizing.h"
#include "util.h"

bool kgb_backend_on_host(const char *backend)
{
	return strcmp(backend, "opencl") == 0;
}

uint32_t kgb_cpu_max_parse(const char *text)
{
	char *end;
	if (!text || *text < '0' || *text > '9')
		return 0;   /* "max", empty, or not a number */
	unsigned long long quota = strtoull(text, &end, 10);
	if (end == text || *end != ' ')
		return 0;
	const char *p = end + 1;
	unsigned long long period = strtoull(p, &end, 10);
	if (end == p || (*end && *end != '\n') || period == 0 || quota == 0)
		return 0;
	unsigned long long n = (quota + period - 1) / period;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* The first line of a small file, or "" */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
}

/* See sizing.h. */
uint32_t kgb__cgroup_quota(const char *mount, const char *path, bool v2)
{
	char dir[1024], file[1100], a[128], b[128];
	uint32_t best = 0;
	snprintf(dir, sizeof dir, "%s", path);
	for (;;) {
		uint32_t q;
		const char *sep = strcmp(dir, "/") == 0 ? "" : dir;
		if (v2) {
			snprintf(file, sizeof file, "%s%s/cpu.max", mount, sep);
			read_line(file, a, sizeof a);
			q = kgb_cpu_max_parse(a);
		} else {
			snprintf(file, sizeof file, "%s%s/cpu.cfs_quota_us", mount, sep);
			read_line(file, a, sizeof a);
			snprintf(file, sizeof file, "%s%s/cpu.cfs_period_us", mount, sep);
			read_line(file, b, sizeof b);
			char joined[260];
			a[strcspn(a, "\n")] = '\0';
			snprintf(joined, sizeof joined, "%s %s", a, b);
			q = kgb_cpu_max_parse(joined);   /* a quota of -1 (none) is not a number here */
		}
		if (q && (!best || q < best))
			best = q;
		char *slash = strrchr(dir, '/');
		if (!slash || strcmp(dir, "/") == 0)
			break;
		if (slash == dir)
			dir[1] = '\0';
		else
			*slash = '\0';
	}
	return best;
}

/* The CPU quota of this process's cgroups (v2, then v1's cpu controller), 0: none */
static uint32_t own_quota(void)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[1200];
	uint32_t best = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || c2[1] != '/')
			continue;
		*c2 = '\0';
		const char *ctrls = c1 + 1, *path = c2 + 1;
		uint32_t q = 0;
		if (strcmp(line, "0") == 0 && !*ctrls) {
			q = kgb__cgroup_quota("/sys/fs/cgroup", path, true);
		} else {
			/* a v1 hierarchy whose controllers include cpu */
			char list[256];
			snprintf(list, sizeof list, ",%s,", ctrls);
			if (strstr(list, ",cpu,"))
				q = kgb__cgroup_quota("/sys/fs/cgroup/cpu", path, false);
		}
		if (q && (!best || q < best))
			best = q;
	}
	fclose(f);
	return best;
}

static uint32_t g_cpus;

static void count_cpus(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t n = online > 0 ? (uint32_t)KGB_MIN(online, (long)UINT32_MAX) : 1;
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0) {
		int a = CPU_COUNT(&set);
		if (a > 0 && (uint32_t)a < n)
			n = (uint32_t)a;
	}
	uint32_t q = own_quota();
	if (q && q < n)
		n = q;
	g_cpus = n ? n : 1;
}

uint32_t kgb_usable_cpus(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, count_cpus);
	return g_cpus;
}

uint32_t kgb_default_slots(uint32_t cpus, size_t ndevs, bool cpu_device)
{
	uint64_t per = cpus > 2 ? (cpus - 2) / (ndevs ? ndevs : 1) : 1;
	per = KGB_MAX(per, (uint64_t)1);
	per = KGB_MIN(per, (uint64_t)(cpu_device ? 2 : KGB_SLOTS_MAX));
	return (uint32_t)per;
}

uint32_t kgb_default_helpers(uint32_t cpus, size_t ndevs, uint32_t slots, bool cpu_device)
{
	uint64_t busy = (uint64_t)(ndevs ? ndevs : 1) * (cpu_device ? 1 : KGB_MAX(slots, 1u));
	uint64_t per = cpus / busy;
	return (uint32_t)KGB_MIN(KGB_MAX(per, (uint64_t)1), (uint64_t)KGB_HELPERS_MAX);
}

uint32_t kgb_helper_jobs(void)
{
	return kgb_be_env_u32("KGB_PYREC_JOBS", KGB_MIN(kgb_usable_cpus(), KGB_HELPERS_MAX));
}
