/* libFuzzer target: frame decoding. Any byte string must either be rejected with a
 * message or decode to an envelope that packs again and decodes to the same bytes'
 * meaning (same body case and seq). Build: make fuzz; run: build/fuzz/fuzz_wire. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	Kgb__Envelope *env = kgb_wire_unpack(data, size, KGB_MAX_FRAME_WORKER, err, sizeof err);
	if (!env) {
		KGB_ASSERT(err[0] != '\0');
		return 0;
	}
	size_t len;
	uint8_t *buf = kgb_wire_pack(env, &len);
	Kgb__Envelope *again = kgb_wire_unpack(buf, len, KGB_MAX_FRAME_WORKER, err, sizeof err);
	KGB_ASSERT_MSG(again, "re-packed envelope rejected: %s", err);
	KGB_ASSERT(again->body_case == env->body_case);
	KGB_ASSERT(again->seq == env->seq);
	kgb_wire_free(again);
	kgb_wire_free(env);
	free(buf);
	return 0;
}
