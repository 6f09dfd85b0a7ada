/* Slots and helper processes sized from the machine (worker/sizing.h). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sizing.h"
#include "test.h"
#include "util.h"

TEST(worker_sizing_default_slots)
{
	ASSERT_EQ_INT(kgb_default_slots(16, 1, false), 14);   /* a 16-core machine, one GPU */
	ASSERT_EQ_INT(kgb_default_slots(128, 8, false), 15);  /* 126 CPUs over 8 GPUs */
	ASSERT_EQ_INT(kgb_default_slots(64, 1, false), KGB_SLOTS_MAX);
	ASSERT_EQ_INT(kgb_default_slots(6, 2, false), 2);
	ASSERT_EQ_INT(kgb_default_slots(8, 4, false), 1);
	ASSERT_EQ_INT(kgb_default_slots(2, 1, false), 1);     /* nothing left over: still one */
	ASSERT_EQ_INT(kgb_default_slots(1, 1, false), 1);
	ASSERT_EQ_INT(kgb_default_slots(0, 0, false), 1);
	ASSERT_EQ_INT(kgb_default_slots(16, 0, false), 14);   /* no device: as for one */
	ASSERT_EQ_INT(kgb_default_slots(16, 1, true), 2);     /* the device is the CPU */
	ASSERT_EQ_INT(kgb_default_slots(2, 1, true), 1);
}

TEST(worker_sizing_default_helpers)
{
	ASSERT_EQ_INT(kgb_default_helpers(16, 1, 14, false), 1);   /* 14 executors share 16 CPUs */
	ASSERT_EQ_INT(kgb_default_helpers(64, 1, 4, false), KGB_HELPERS_MAX);
	ASSERT_EQ_INT(kgb_default_helpers(32, 2, 4, false), 4);
	ASSERT_EQ_INT(kgb_default_helpers(2, 1, 1, true), 2);      /* one executor at a time */
	ASSERT_EQ_INT(kgb_default_helpers(12, 2, 2, true), 6);
	ASSERT_EQ_INT(kgb_default_helpers(1, 4, 16, false), 1);
	ASSERT_EQ_INT(kgb_default_helpers(8, 0, 0, false), 8);
}

TEST(worker_sizing_cpu_max_parse)
{
	ASSERT_EQ_INT(kgb_cpu_max_parse("max 100000\n"), 0);
	ASSERT_EQ_INT(kgb_cpu_max_parse("200000 100000\n"), 2);
	ASSERT_EQ_INT(kgb_cpu_max_parse("150000 100000"), 2);      /* 1.5 CPUs: rounded up */
	ASSERT_EQ_INT(kgb_cpu_max_parse("50000 100000"), 1);
	ASSERT_EQ_INT(kgb_cpu_max_parse("-1 100000"), 0);          /* v1's "no quota" */
	ASSERT_EQ_INT(kgb_cpu_max_parse(" 100000"), 0);
	ASSERT_EQ_INT(kgb_cpu_max_parse("100000 0"), 0);
	ASSERT_EQ_INT(kgb_cpu_max_parse("100000 10x"), 0);
	ASSERT_EQ_INT(kgb_cpu_max_parse(""), 0);
	ASSERT_EQ_INT(kgb_cpu_max_parse(NULL), 0);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0)
		FAIL("cannot write %s", path);
	fclose(f);
}

/* The quota is the smallest set on the cgroup or an ancestor, in both layouts. */
TEST(worker_sizing_cgroup_quota_walks_ancestors)
{
	char root[] = "/tmp/kgb-sizing-XXXXXX", a[1100], ab[1100];
	if (!mkdtemp(root))
		FAIL("mkdtemp");
	snprintf(a, sizeof a, "%s/a", root);
	snprintf(ab, sizeof ab, "%s/a/b", root);
	if (mkdir(a, 0700) != 0 || mkdir(ab, 0700) != 0)
		FAIL("mkdir");
	ASSERT_EQ_INT(kgb__cgroup_quota(root, "/a/b", true), 0);   /* no files: none */
	put(root, "cpu.max", "max 100000\n");
	put(ab, "cpu.max", "800000 100000\n");
	ASSERT_EQ_INT(kgb__cgroup_quota(root, "/a/b", true), 8);
	put(a, "cpu.max", "250000 100000\n");                         /* the parent's is smaller */
	ASSERT_EQ_INT(kgb__cgroup_quota(root, "/a/b", true), 3);
	ASSERT_EQ_INT(kgb__cgroup_quota(root, "/", true), 0);
	put(root, "cpu.max", "100000 100000\n");
	ASSERT_EQ_INT(kgb__cgroup_quota(root, "/", true), 1);
	/* v1: quota over period; -1 is none */
	put(ab, "cpu.cfs_quota_us", "-1\n");
	put(ab, "cpu.cfs_period_us", "100000\n");
	ASSERT_EQ_INT(kgb__cgroup_quota(root, "/a/b", false), 0);
	put(a, "cpu.cfs_quota_us", "400000\n");
	put(a, "cpu.cfs_period_us", "100000\n");
	ASSERT_EQ_INT(kgb__cgroup_quota(root, "/a/b", false), 4);
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0)
		FAIL("%s", cmd);
}

/* The usable CPUs follow the affinity mask (the test runs in a process of its own) */
TEST(worker_sizing_usable_cpus_follow_affinity)
{
	cpu_set_t set, one;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		FAIL("sched_getaffinity");
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			CPU_SET(c, &one);
			break;
		}
	if (sched_setaffinity(0, sizeof one, &one) != 0)
		FAIL("sched_setaffinity");
	ASSERT_EQ_INT(kgb_usable_cpus(), 1);
	unsetenv("KGB_PYREC_JOBS");
	ASSERT_EQ_INT(kgb_helper_jobs(), 1);
	setenv("KGB_PYREC_JOBS", "3", 1);
	ASSERT_EQ_INT(kgb_helper_jobs(), 3);
}
