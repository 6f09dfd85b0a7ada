/* The coordinator's languages per backend (coordinator/langs.c) must be the worker
 * backends' own sets, or "platforms": "all" would leave out a platform that can run a
 * candidate, or send one where it cannot run. */
#include <jansson.h>

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

/* A python candidate (a plan of kind "python") is its workers' language, not a
 * backend's: every platform is one of its platforms ("all"), and its jobs go to the
 * workers that record Python candidates (coordinator/state.c). */
TEST(coord_langs_python)
{
	json_error_t je;
	json_t *py = json_loads("{\"kind\": \"python\", \"module\": \"add.py\"}", 0, &je);
	json_t *tr = json_loads("{\"kernels\": [{\"lang\": \"triton\"}]}", 0, &je);
	json_t *nat = json_loads("{\"kind\": \"native\"}", 0, &je);
	ASSERT_EQ_INT(kgb_coord_plan_langs(py), KGB_COORD_LANG_PYTHON);
	ASSERT_EQ_INT(kgb_coord_plan_langs(tr), 1u << KGB_LANG_TRITON);
	ASSERT_EQ_INT(kgb_coord_plan_langs(nat), 0);
	/* as the store gives it back (coordinator/load.c) */
	ASSERT_EQ_INT(kgb_coord_langs_parse("python"), KGB_COORD_LANG_PYTHON);
	ASSERT_EQ_INT(kgb_coord_langs_parse("python,triton"), KGB_COORD_LANG_PYTHON | (1u << KGB_LANG_TRITON));
	ASSERT_TRUE(KGB_COORD_LANG_PYTHON > (1u << KGB_LANG__COUNT));
	const char *const backends[] = { "opencl", "cuda", "hip", "level-zero" };
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
		ASSERT_TRUE(kgb_coord_platform_runs(backends[i], KGB_COORD_LANG_PYTHON));
	json_decref(py);
	json_decref(tr);
	json_decref(nat);
}
