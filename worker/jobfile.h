/* Standalone job files (`kgb-worker run`): docs/TEAM-NOTES.md "Job files" and
 * docs/worker.md. A job file names an operator, cases, a plan and its sources; it is
 * turned into the same JobAssign the coordinator sends. */
#ifndef KGB_JOBFILE_H
#define KGB_JOBFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "proto/kgb.pb-c.h"

typedef struct kgb_jobfile {
	Kgb__JobAssign *job;       /* freed by kgb_jobfile_release */
	char backend[32];          /* "backend" (default "opencl") */
	uint32_t device;           /* "device" (default 0): index within the backend */
} kgb_jobfile_t;

/* Read and check the job file at path: every source read, every case index in range.
 * Errors name the file, the field and the value ("job.json: cases[2]: 91 is out of
 * range (add has 40 cases)"). Returns 0 and fills *out (release with
 * kgb_jobfile_release) or -1 with err filled. */
int kgb_jobfile_load(const char *path, kgb_jobfile_t *out, char *err, size_t errlen);
/* Same, from JSON text already in memory; dir is where relative paths start. */
int kgb_jobfile_parse(const char *json, size_t len, const char *origin, const char *dir, kgb_jobfile_t *out,
                      char *err, size_t errlen);
void kgb_jobfile_release(kgb_jobfile_t *jf);

#endif
