/* The coordinator's languages per backend (coordinator/langs.c) must be the worker
 * backends' own sets, or "platforms": "all" would leave out a platform that can run a
 * candidate, or send one where it cannot run. */
#include "../../coordinator/langs.h"
#include "backend.h"
#include "plan.h"
#include "test.h"

TEST(coord_langs_match_the_worker_backends)
{
	const kgb_backend_t *const be[] = { &kgb_backend_opencl, &kgb_backend_cuda, &kgb_backend_hip,
		                                &kgb_backend_level_zero };
	for (size_t i = 0; i < sizeof be / sizeof be[0]; i++)
		ASSERT_EQ_INT(kgb_coord_backend_langs(be[i]->name), be[i]->langs);
	ASSERT_EQ_INT(kgb_coord_backend_langs("no-such-backend"), 0);
}

TEST(coord_langs_parse)
{
	ASSERT_EQ_INT(kgb_coord_langs_parse("triton"), 1u << KGB_LANG_TRITON);
	ASSERT_EQ_INT(kgb_coord_langs_parse("cuda,triton"), (1u << KGB_LANG_CUDA) | (1u << KGB_LANG_TRITON));
	ASSERT_EQ_INT(kgb_coord_langs_parse("opencl,bogus,"), 1u << KGB_LANG_OPENCL);
	ASSERT_EQ_INT(kgb_coord_langs_parse(""), 0);
	ASSERT_EQ_INT(kgb_coord_langs_parse(NULL), 0);
	/* a Triton candidate runs on CUDA platforms only */
	unsigned t = kgb_coord_langs_parse("triton");
	ASSERT_TRUE((t & kgb_coord_backend_langs("cuda")) != 0);
	ASSERT_TRUE((t & kgb_coord_backend_langs("opencl")) == 0);
}
