/* Writing one case's buffers to a directory for debugging (kgb-worker run --dump).
 *
 * The executor calls kgb_case_dump after runs 1 and 2 of a case, when the environment
 * names a directory in KGB_EXEC_DUMP_DIR (kgb-worker run --dump sets it for its own
 * executor only; the daemon clears it). See docs/worker.md, "Dumping a case". */
#ifndef KGB_WORKER_DUMP_H
#define KGB_WORKER_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"

#define KGB_DUMP_ENV "KGB_EXEC_DUMP_DIR"

/* What one case produced. input[i]: the bytes uploaded for tensor i (IN and INOUT),
 * output[i]: the bytes read back after run 1 (OUT and INOUT), bytes[i]: the size of
 * either; ref: the reference values (doubles, lanes * storage per tensor). NULL
 * entries are skipped. */
typedef struct kgb_dump_case {
	const kgb_case_t *c;
	uint64_t seed;
	const uint8_t *input[KGB_MAX_TENSORS];
	const uint8_t *output[KGB_MAX_TENSORS];
	size_t bytes[KGB_MAX_TENSORS];
	const kgb_hostbufs_t *ref;
	const char *verdict;       /* the validator's verdict name */
	const char *message;
	double max_abs_err, max_rel_err;
} kgb_dump_case_t;

/* Write DIR/case-<index>/ (created, replacing files of an earlier dump): per tensor
 * NAME.input.bin, NAME.output.bin (raw, in the tensor's dtype, the whole strided
 * storage), NAME.output.f64 and NAME.reference.f64 (float64, little-endian, the same
 * storage elements), and case.json describing dtype, shape, strides, storage, files,
 * scalars, tolerance and verdict. Returns 0, or -1 with err naming the path. */
int kgb_case_dump(const char *dir, const kgb_dump_case_t *d, char *err, size_t errlen);

#endif
