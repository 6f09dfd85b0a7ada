/* The executor: runs one job (JobAssign) on one device, always in a child process of
 * the worker, because a kernel that faults or hangs can take its process down and
 * vendor runtimes do not survive fork(). docs/worker.md describes the whole flow.
 *
 * Parent <-> child contract. The parent spawns `<exe> exec --backend B --device N`
 * (posix_spawn, its own process group, a cleaned environment) with the serialized
 * JobAssign on stdin. The child writes records on stdout, each
 *     u32 little-endian length of the rest | kind byte | protobuf payload
 * one KGB_EXEC_REC_CASE (a kgb.CaseResult) per case as soon as it is known, in the
 * job's case order, then one KGB_EXEC_REC_END (a kgb.JobResult with no cases: log,
 * compile_ms, device_ms, infra). Cases are run in order, so the first case without a
 * record is the one in progress when the child dies or is killed. Around every device
 * run it writes KGB_EXEC_REC_LAUNCH records (enter, leave). */
#ifndef KGB_EXECUTOR_H
#define KGB_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include "proto/kgb.pb-c.h"
#include "backend.h"

#define KGB_EXEC_REC_CASE 'C'
#define KGB_EXEC_REC_END 'E'
/* One byte of payload, no protobuf: 1 when the child starts a device run (the plan's
 * kernels, launched and waited for), 0 when it has returned. The parent judges hangs
 * by these windows only: compile, references and staging never become a kernel's
 * verdict (kgb_exec_deadline). */
#define KGB_EXEC_REC_LAUNCH 'L'
/* Payload 2 of a KGB_EXEC_REC_LAUNCH record: the child waits for the device lock
 * (another job on the same device holds it); the wait counts neither as a run nor as
 * set-up. 0 ends it. See "Sharing a device" in docs/worker.md. */
#define KGB_EXEC_LAUNCH_WAIT 2
/* No payload: after its END record, a pre-warmed executor whose job was trusted
 * (kgb_exec_job_trusted) and ended cleanly keeps its device context and BLAS handle
 * and waits on its socket for another trusted job (kgb_exec_assign); the parent may
 * hand it one or let it go (docs/worker.md, "Pre-warmed executors"). */
#define KGB_EXEC_REC_READY 'R'
/* The most jobs one executor runs before it exits all the same. */
#define KGB_EXEC_REUSE_MAX 64
#define KGB_EXEC_MAX_RECORD (64u << 20)
#define KGB_EXEC_MAX_JOB (64u << 20)

/* Exit status of the executor child. */
#define KGB_EXEC_EXIT_OK 0
#define KGB_EXEC_EXIT_USAGE 2      /* bad command line */
#define KGB_EXEC_EXIT_INFRA 3      /* worker-side failure before any case ran */
#define KGB_EXEC_EXIT_DEAD 4       /* the device context was lost (fault / hang); all cases reported */
#define KGB_EXEC_EXIT_UNHEALTHY 5  /* health mode: the check failed */
#define KGB_EXEC_EXIT_OOB_WRITE 6  /* the case in progress wrote into a guard page (guardpage.h) */
#define KGB_EXEC_EXIT_OOB_READ 7   /* the case in progress read from a guard page */

/* Milliseconds the parent waits past a job's time limit before it kills the child
 * (the child stops itself at the limit when it can, and reports the timeout). */
#define KGB_EXEC_KILL_GRACE_MS 500u

/* ---- child side ---- */

/* Run job on device `index` of backend `be`, writing records to out_fd. Meant for the
 * executor child (unit tests also call it in-process). Returns a KGB_EXEC_EXIT_* code.
 * Nothing it allocates outlives the call. */
int kgb_executor_run(const kgb_backend_t *be, uint32_t index, const Kgb__JobAssign *job, int out_fd);

/* What a pre-warmed executor opened before its job arrived (docs/worker.md,
 * "Pre-warmed executors"): the device context and, where the backend has a BLAS
 * library, its handle (NULL where it could not be made; the job then makes its own). */
typedef struct kgb_exec_warm {
	void *ctx;
	struct kgb_nblas *nb;
	double open_ms;            /* how long opening them took */
	unsigned jobs;             /* jobs this executor ran with them before */
} kgb_exec_warm_t;

/* kgb_executor_run with what warm holds (NULL: nothing), which it takes over: a job
 * that needs them uses them, one that does not closes them first (a native provider's
 * job frees the context before its provider opens its own). A trusted job
 * (kgb_exec_job_trusted) that ends cleanly gives them back in *warm instead of closing
 * them, for the executor's next job; warm->ctx is NULL otherwise. */
int kgb_executor_run_warm(const kgb_backend_t *be, uint32_t index, const Kgb__JobAssign *job, int out_fd,
                          kgb_exec_warm_t *warm);

/* True for a job that runs no candidate's code on the device: a native candidate of an
 * operator the backend's BLAS library computes in the executor (native_blas.h). Only
 * such jobs may share an executor (and so a device context, its kept buffers and its
 * memory) with the jobs before them; a candidate's job always gets a fresh one. */
bool kgb_exec_job_trusted(const Kgb__JobAssign *job);

/* Open device `index` of `be`, run the backend's health check, close. Returns 0 when
 * healthy, -1 with the reason in err. */
int kgb_executor_health(const kgb_backend_t *be, uint32_t index, char *err, size_t errlen);

/* `kgb-worker exec --backend B --device N [--health | --warm]`: argv[0] is "exec".
 * Job mode reads the JobAssign from stdin. Warm mode opens the device first, then
 * waits on stdin (a socket) for a file descriptor holding the JobAssign
 * (kgb_exec_assign); stdin closed without one ends it quietly. Returns the process
 * exit status. */
int kgb_executor_main(int argc, char **argv);

/* ---- parent side ---- */

/* KGB_EXEC_WARM_BLAS is KGB_EXEC_WARM whose child also makes the device's BLAS handle
 * before its job (worth it when the job will likely be a trusted one); the child is a
 * KGB_EXEC_WARM one in every other respect. */
typedef enum { KGB_EXEC_JOB = 0, KGB_EXEC_HEALTH, KGB_EXEC_WARM, KGB_EXEC_WARM_BLAS } kgb_exec_mode_t;

/* Why the parent killed a child (decides the verdicts of the unfinished cases). */
typedef enum {
	KGB_EXEC_KILL_NONE = 0,
	KGB_EXEC_KILL_TIMEOUT,     /* time limit: case in progress TIMEOUT, rest NOT_RUN */
	KGB_EXEC_KILL_CANCEL,      /* cancelled: the result is discarded */
	KGB_EXEC_KILL_SHUTDOWN,    /* worker stopping: infra error, the coordinator retries */
	KGB_EXEC_KILL_SETUP,       /* the job's limit ran out outside any device run (compile,
	                            * references, staging on a busy machine): infra error */
} kgb_exec_kill_t;

typedef struct kgb_exec_child kgb_exec_child_t;

/* Start an executor child. exe NULL means /proc/self/exe. job is required in JOB mode
 * and ignored in HEALTH and WARM modes (a WARM child opens its device and waits for
 * kgb_exec_assign). Returns 0 and *out (free with kgb_exec_destroy) or -1. */
int kgb_exec_spawn(const char *exe, kgb_exec_mode_t mode, const char *backend, uint32_t index,
                   const Kgb__JobAssign *job, kgb_exec_child_t **out, char *err, size_t errlen);

/* Hand job to a WARM child (it becomes a JOB child: its time limit counts from now).
 * Returns 0, or -1 with err when the child cannot take it (it has ended, or its
 * socket is gone): destroy it and start another. */
int kgb_exec_assign(kgb_exec_child_t *ch, const Kgb__JobAssign *job, char *err, size_t errlen);

/* Device visibility of the executor child of device `index` of backend be
 * (docs/multi-gpu.md). inherited is the worker's own value of be->visible_env (NULL
 * when unset). Returns 1 and the child's value in value (the index, or the index-th
 * comma-separated entry of inherited): the child then opens device 0. Returns 0 when
 * the backend has no such variable or KGB_EXEC_VISIBILITY is "off" (the child opens
 * `index` among all devices), -1 when inherited has no entry `index`. kgb_exec_spawn
 * applies it to every child it starts. */
int kgb_exec_visibility(const kgb_backend_t *be, uint32_t index, const char *inherited, char *value,
                        size_t valuelen);

/* The read end of the child's stdout (non-blocking), or -1 once it reached EOF. */
int kgb_exec_fd(const kgb_exec_child_t *ch);
pid_t kgb_exec_pid(const kgb_exec_child_t *ch);

/* Read and decode whatever the child has written. Returns 1 at EOF, 0 when more may
 * come, -1 when the child wrote something malformed (err says what; the child is
 * then killed and its end is reported as a crash). */
int kgb_exec_pump(kgb_exec_child_t *ch, char *err, size_t errlen);

/* Reap the child if it has exited (wait: block until it does). Returns true once
 * the child has been reaped. */
bool kgb_exec_reap(kgb_exec_child_t *ch, bool wait);

/* True when a job's child has said all it will before exiting: its output ended
 * (EOF), or it said it waits for another job (KGB_EXEC_REC_READY), after a
 * well-formed end record, no case reported a fault, and the worker
 * killed nothing, and every case of job has its record. An executor that finished cleanly closes its output before it
 * releases the device (context, modules, BLAS handle), which can take a second, so
 * the job's result (kgb_exec_result) is final here and the slot can take the next
 * job; the child is reaped later (kgb_exec_reap), and an exit status that asks for a
 * health check (kgb_exec_needs_health) still does then. */
bool kgb_exec_finished(const kgb_exec_child_t *ch, const Kgb__JobAssign *job);

/* After kgb_exec_result: true when the child kept its device for another trusted job
 * (KGB_EXEC_REC_READY) and is still alive; kgb_exec_rearm then makes it a pre-warmed
 * executor again, for kgb_exec_assign with a trusted job only. */
bool kgb_exec_reusable(kgb_exec_child_t *ch);
void kgb_exec_rearm(kgb_exec_child_t *ch);

/* SIGKILL the child's process group and remember why. */
void kgb_exec_kill(kgb_exec_child_t *ch, kgb_exec_kill_t why);

/* Time a job may spend outside device runs (compiling, references, staging) beyond
 * its time limit before the worker gives it up as an infrastructure failure. */
#define KGB_EXEC_SETUP_ALLOWANCE_MS 120000u

/* The watchdog's decision at now_ms for a job whose time limit is limit_ms (0: none).
 * The limit bounds each device run: a run open for longer than the limit (plus
 * KGB_EXEC_KILL_GRACE_MS) is a hang the backend did not stop, KGB_EXEC_KILL_TIMEOUT,
 * the kernel's verdict. Time outside runs is the worker's: past the limit plus
 * KGB_EXEC_SETUP_ALLOWANCE_MS it is KGB_EXEC_KILL_SETUP, an infrastructure retry,
 * never a kernel's verdict. Otherwise KGB_EXEC_KILL_NONE. */
kgb_exec_kill_t kgb_exec_deadline(const kgb_exec_child_t *ch, double now_ms, uint32_t limit_ms);
/* The same rule on plain values: a child started at start_ms, inside a device run
 * since launch_ms when in_launch, launch_total_ms spent in runs that have ended. */
kgb_exec_kill_t kgb_exec_watchdog(double now_ms, double start_ms, bool in_launch, double launch_ms,
                                  double launch_total_ms, uint32_t limit_ms);

/* Number of case records received so far. */
size_t kgb_exec_cases_done(const kgb_exec_child_t *ch);
/* The device lock the executors of this process's device `index` of `backend` share
 * (docs/worker.md, "Sharing a device"). Returns 0, or -1 when no lock directory can
 * be made. */
int kgb_exec_lock_path(const char *backend, uint32_t index, char *out, size_t outlen);
/* Whether the child is waiting for its device's lock (KGB_EXEC_LAUNCH_WAIT). */
bool kgb_exec_waiting(const kgb_exec_child_t *ch);
/* Collect the rest of a spawned job as kgb_exec_job_sync does (its limit, its
 * deadline), destroy the child and return the result. */
Kgb__JobResult *kgb_exec_finish(kgb_exec_child_t *ch, const Kgb__JobAssign *job);

/* After the child is reaped: true if the device must pass a health check before it
 * takes another job (the child crashed, timed out, lost its context or misbehaved). */
bool kgb_exec_needs_health(const kgb_exec_child_t *ch);

/* After the child is reaped: the signal that ended it when that came from outside
 * (an operator's kill, the OOM killer: one no kernel raises, and not one the worker
 * sent), else 0. Such an end says nothing about the device. */
int kgb_exec_killed_outside(const kgb_exec_child_t *ch);

/* After the child is reaped: its exit status (-signal if killed by a signal). */
int kgb_exec_status(const kgb_exec_child_t *ch);

/* After the child is reaped (or kgb_exec_finished): the job's result, built from the child's records and
 * completed from how it ended (crash, timeout, missing cases, infra). Ownership moves
 * to the caller: free with kgb__job_result__free_unpacked(r, NULL). Returns NULL for
 * a cancelled child. */
Kgb__JobResult *kgb_exec_result(kgb_exec_child_t *ch, const Kgb__JobAssign *job);

/* Kill (if still running), reap and free; sets *ch to NULL. */
void kgb_exec_destroy(kgb_exec_child_t **ch);

/* Run job in a child and wait for it (standalone mode, tests): spawn, collect, kill at
 * the job's time limit. Returns the result (free as above) or NULL with err filled
 * when no child could be started. *needs_health (may be NULL) as above. */
Kgb__JobResult *kgb_exec_job_sync(const char *exe, const char *backend, uint32_t index,
                                  const Kgb__JobAssign *job, bool *needs_health, char *err, size_t errlen);

/* Run a health check in a fresh child and wait (at most timeout_ms). Returns 0 when
 * healthy, -1 with the reason in err. */
int kgb_exec_health_sync(const char *exe, const char *backend, uint32_t index, uint32_t timeout_ms,
                         char *err, size_t errlen);

/* Helpers shared with the daemon: a CaseResult / JobResult allocated so that
 * kgb__job_result__free_unpacked frees it (message copied). */
Kgb__CaseResult *kgb_exec_case_new(uint32_t case_index, int verdict, const char *message);
Kgb__JobResult *kgb_exec_result_new(uint64_t job_id, uint64_t epoch);
/* Append cr to r (ownership moves to r). */
void kgb_exec_result_add(Kgb__JobResult *r, Kgb__CaseResult *cr);
/* Replace a string field allocated for free_unpacked (old value freed unless it is the
 * protobuf-c empty default). */
void kgb_exec_set_str(char **field, const char *value);

#endif
