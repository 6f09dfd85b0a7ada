/* kgb refs: compute (or load from the reference cache) the CPU reference of every case
 * of the selected operators, in parallel worker processes, and print how long it took
 * (no coordinator needed). The cache is the one workers use: $KGB_CACHE_DIR/ref. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "cli.h"
#include "output.h"
#include "util.h"

/* One unit of work: case `index` of operator `op`. */
typedef struct refs_task {
	uint32_t op;
	uint32_t index;
} refs_task_t;

/* Shared between the parent and the forked children (MAP_SHARED). */
typedef struct refs_shared {
	uint64_t next;            /* next task to take (atomic) */
	uint64_t failed;          /* tasks whose reference failed (atomic) */
	char first_err[512];      /* the first failure's message */
	int first_err_set;        /* atomic flag: first_err was claimed */
} refs_shared_t;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Child body: take tasks until none is left; record each task's seconds. */
static void refs_child(const refs_task_t *tasks, size_t ntasks, double *secs, refs_shared_t *sh,
                       const size_t *ops, uint64_t seed)
{
	for (;;) {
		uint64_t k = __atomic_fetch_add(&sh->next, 1, __ATOMIC_RELAXED);
		char err[512] = "";
		kgb_case_t c;
		kgb_hostbufs_t b;
		double t0;
		if (k >= ntasks)
			break;
		const kgb_op_t *op = kgb_catalog_at(ops[tasks[k].op]);
		t0 = now_s();
		memset(&b, 0, sizeof b);
		if (kgb_case_build(op, tasks[k].index, &c, err, sizeof err) != 0) {
			secs[k] = -1;
		} else {
			if (kgb_case_reference(&c, seed, &b, err, sizeof err) != 0)
				secs[k] = -1;
			else
				secs[k] = now_s() - t0;
			kgb_hostbufs_release(&b);
			kgb_case_release(&c);
		}
		if (secs[k] < 0) {
			__atomic_fetch_add(&sh->failed, 1, __ATOMIC_RELAXED);
			if (__atomic_exchange_n(&sh->first_err_set, 1, __ATOMIC_ACQ_REL) == 0)
				kgb_strlcpy(sh->first_err, err, sizeof sh->first_err);
		}
	}
}

typedef struct op_time {
	size_t op;        /* catalog index */
	double secs;      /* sum over its cases */
	uint32_t cases;
} op_time_t;

static int cmp_op_time(const void *a, const void *b)
{
	const op_time_t *x = a, *y = b;
	return x->secs < y->secs ? 1 : x->secs > y->secs ? -1 : 0;
}

/* kgb refs [--dataset NAME] [--op NAME] [--jobs N] [--seed S] [--top N] [--json]. */
int kgb_cli_cmd_refs(int argc, char **argv, kgb_cli_global_t *g)
{
	const char *dataset = "aten", *only = NULL;
	uint64_t jobs = 0, seed = 1, top = 10;
	bool json = false;
	const kgb_cli_opt_t opts[] = {
		{ "dataset", 'd', KGB_CLI_OPT_STRING, &dataset, "NAME",
		  "aten (= mc, the default), vllm, cublas, nocublas, ms, demo or all" },
		{ "op", 0, KGB_CLI_OPT_STRING, &only, "NAME", "only this operator" },
		{ "jobs", 'j', KGB_CLI_OPT_UINT, &jobs, "N", "worker processes (default: every online core)" },
		{ "seed", 0, KGB_CLI_OPT_UINT, &seed, "S", "input seed of the cases (default 1)" },
		{ "top", 0, KGB_CLI_OPT_UINT, &top, "N", "operators to list, slowest first (default 10)" },
		{ "json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "print the timings as JSON" },
	};
	const kgb_cli_spec_t spec = {
		.name = "refs",
		.usage = "[--dataset NAME] [--op NAME] [--jobs N] [--seed S] [--top N] [--json]",
		.summary = "Compute the CPU reference of every case of the selected operators, or load\n"
		           "it from the reference cache ($KGB_CACHE_DIR/ref, as the workers do), in N\n"
		           "parallel processes; print the wall time and the slowest operators.",
		KGB_CLI_OPTS(opts),
	};
	char *pos[1];
	int npos = 0, rc = KGB_CLI_OK;
	unsigned mask = 0;
	size_t *ops = NULL, nops = 0, ntasks = 0, nchild = 0;
	refs_task_t *tasks = NULL;
	double *secs = NULL, t0, wall;
	refs_shared_t *sh = NULL;
	pid_t *pids = NULL;
	op_time_t *ot = NULL;
	size_t secs_bytes = 0;

	int prc = kgb_cli_parse_args(&spec, argc, argv, g, pos, &npos, NULL, 0);
	if (prc >= 0)
		return prc;
	if (kgb_dataset_parse(dataset, &mask) < 0) {
		fprintf(stderr, "kgb refs: --dataset: unknown dataset '%s' (aten, mc, vllm, cublas, "
		                "nocublas, ms, demo, all)\n", dataset);
		return KGB_CLI_EXIT_USAGE;
	}
	if (only && !kgb_catalog_find(only)) {
		fprintf(stderr, "kgb refs: --op: unknown operator '%s' (see kgb ops)\n", only);
		return KGB_CLI_EXIT_USAGE;
	}
	if (jobs == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = n > 0 ? (uint64_t)n : 1;
	}
	if (jobs > 1024) {
		fprintf(stderr, "kgb refs: --jobs: %llu is more than 1024\n", (unsigned long long)jobs);
		return KGB_CLI_EXIT_USAGE;
	}

	/* the catalog's lazy state (parsed lists, version) is built once, before the fork */
	(void)kgb_catalog_version();
	ops = kgb_xcalloc(kgb_catalog_count() + 1, sizeof *ops);
	for (size_t i = 0; i < kgb_catalog_count(); i++) {
		const kgb_op_t *op = kgb_catalog_at(i);
		if (only ? strcmp(op->name, only) == 0 : (op->datasets & mask) != 0) {
			ops[nops++] = i;
			ntasks += kgb_op_case_count(op);
		}
	}
	tasks = kgb_xcalloc(ntasks + 1, sizeof *tasks);
	ntasks = 0;
	for (size_t i = 0; i < nops; i++) {
		uint32_t nc = kgb_op_case_count(kgb_catalog_at(ops[i]));
		for (uint32_t k = 0; k < nc; k++) {
			tasks[ntasks].op = (uint32_t)i;
			tasks[ntasks].index = k;
			ntasks++;
		}
	}
	secs_bytes = (ntasks + 1) * sizeof *secs;
	secs = mmap(NULL, secs_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (secs == MAP_FAILED || sh == MAP_FAILED) {
		fprintf(stderr, "kgb refs: mmap: %s\n", strerror(errno));
		if (secs == MAP_FAILED)
			secs = NULL;
		if (sh == MAP_FAILED)
			sh = NULL;
		rc = KGB_CLI_EXIT_USAGE;
		goto out;
	}
	memset(sh, 0, sizeof *sh);
	fflush(stdout);
	fflush(stderr);

	t0 = now_s();
	pids = kgb_xcalloc(jobs, sizeof *pids);
	for (uint64_t j = 0; j < jobs; j++) {
		pid_t p = fork();
		if (p < 0) {
			fprintf(stderr, "kgb refs: fork: %s (going on with %zu processes)\n", strerror(errno), nchild);
			break;
		}
		if (p == 0) {
			refs_child(tasks, ntasks, secs, sh, ops, seed);
			_exit(0);
		}
		pids[nchild++] = p;
	}
	if (nchild == 0)
		refs_child(tasks, ntasks, secs, sh, ops, seed);
	for (size_t j = 0; j < nchild; j++) {
		int st = 0;
		while (waitpid(pids[j], &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "kgb refs: worker process %d %s %d\n", (int)pids[j],
			        WIFSIGNALED(st) ? "killed by signal" : "exited with status",
			        WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			rc = KGB_CLI_EXIT_USAGE;
		}
	}
	wall = now_s() - t0;
	if (sh->next < ntasks) {
		fprintf(stderr, "kgb refs: only %llu of %zu cases were taken (a worker process died)\n",
		        (unsigned long long)sh->next, ntasks);
		rc = KGB_CLI_EXIT_USAGE;
	}

	/* per-operator sums */
	ot = kgb_xcalloc(nops + 1, sizeof *ot);
	for (size_t i = 0; i < nops; i++)
		ot[i].op = ops[i];
	double cpu = 0;
	for (size_t k = 0; k < ntasks; k++) {
		if (secs[k] > 0) {
			ot[tasks[k].op].secs += secs[k];
			cpu += secs[k];
		}
		ot[tasks[k].op].cases++;
	}
	qsort(ot, nops, sizeof *ot, cmp_op_time);
	if (top > nops)
		top = nops;

	if (json) {
		json_t *root = json_object(), *arr = json_array();
		json_object_set_new(root, "dataset", json_string(only ? only : dataset));
		json_object_set_new(root, "catalog_version", json_string(kgb_catalog_version()));
		json_object_set_new(root, "operators", json_integer((json_int_t)nops));
		json_object_set_new(root, "cases", json_integer((json_int_t)ntasks));
		json_object_set_new(root, "jobs", json_integer((json_int_t)(nchild ? nchild : 1)));
		json_object_set_new(root, "seed", json_integer((json_int_t)seed));
		json_object_set_new(root, "wall_s", json_real(wall));
		json_object_set_new(root, "cpu_s", json_real(cpu));
		json_object_set_new(root, "failed", json_integer((json_int_t)sh->failed));
		for (size_t i = 0; i < top; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "name", json_string(kgb_catalog_at(ot[i].op)->name));
			json_object_set_new(o, "cases", json_integer(ot[i].cases));
			json_object_set_new(o, "seconds", json_real(ot[i].secs));
			json_array_append_new(arr, o);
		}
		json_object_set_new(root, "slowest", arr);
		kgb_cli_json_print(stdout, root);
	} else {
		printf("references: %zu operators, %zu cases, seed %llu, %zu processes, catalog %s\n", nops,
		       ntasks, (unsigned long long)seed, nchild ? nchild : 1, kgb_catalog_version());
		printf("wall %.2f s, cpu %.2f s (sum over cases)\n", wall, cpu);
		if (top > 0) {
			static const char *const hdr[] = { "OPERATOR", "CASES", "SECONDS", "SHARE" };
			kgb_cli_table_t *t = kgb_cli_table_new(4, hdr, "lrrr");
			for (size_t i = 0; i < top; i++) {
				kgb_cli_table_cell(t, "%s", kgb_catalog_at(ot[i].op)->name);
				kgb_cli_table_cell(t, "%u", ot[i].cases);
				kgb_cli_table_cell(t, "%.2f", ot[i].secs);
				kgb_cli_table_cell(t, "%.1f%%", cpu > 0 ? 100 * ot[i].secs / cpu : 0.0);
			}
			kgb_cli_table_print(t, stdout);
			kgb_cli_table_destroy(&t);
		}
	}
	if (sh->failed) {
		fprintf(stderr, "kgb refs: %llu cases failed; first: %s\n", (unsigned long long)sh->failed,
		        sh->first_err);
		rc = KGB_CLI_EXIT_USAGE;
	}
out:
	if (secs)
		munmap(secs, secs_bytes);
	if (sh)
		munmap(sh, sizeof *sh);
	free(pids);
	free(ot);
	free(tasks);
	free(ops);
	return rc;
}
