/* libFuzzer target: manifest and plan parsing. Any input must be rejected with a
 * message naming the origin, or parse; a parsed manifest whose plans are all inline
 * must serialise and parse again in the coordinator's form.
 * Build: make fuzz; run: build/fuzz/fuzz_manifest [corpus dir]. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"
#include "plan.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[1024];
	const char *text = (const char *)data;

	kgb_plan_t *p = NULL;
	if (kgb_plan_parse(text, size, "fuzz.plan", &p, err, sizeof err) == 0)
		kgb_plan_destroy(&p);
	else
		KGB_ASSERT(strncmp(err, "fuzz.plan", 9) == 0);

	kgb_manifest_t *m = NULL;
	if (kgb_manifest_parse(text, size, "fuzz.json", false, &m, err, sizeof err) != 0) {
		KGB_ASSERT(strncmp(err, "fuzz.json", 9) == 0);
		return 0;
	}
	bool resolved = true;
	for (size_t i = 0; i < m->ncandidates; i++) {
		if (!m->candidates[i].plan_json)
			resolved = false;
		for (size_t s = 0; s < m->candidates[i].nsources; s++)
			if (!m->candidates[i].sources[s].content)
				resolved = false;
	}
	if (resolved) {
		char *out = kgb_manifest_to_json(m);
		kgb_manifest_t *m2 = NULL;
		int rc = kgb_manifest_parse(out, strlen(out), "fuzz.resolved", true, &m2, err, sizeof err);
		KGB_ASSERT_MSG(rc == 0, "resolved form rejected: %s", err);
		kgb_manifest_destroy(&m2);
		free(out);
	}
	kgb_manifest_destroy(&m);
	return 0;
}
