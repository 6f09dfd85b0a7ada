/* Spot checks of the ATen references against values computed by hand: a case is
 * built from the catalog by its label, its inputs are overwritten with chosen values,
 * the reference runs, and selected outputs are compared with the expected numbers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "test.h"
#include "test_case.h"

typedef struct spot {
	const kgb_op_t *op;
	kgb_case_t c;
	kgb_hostbufs_t b;
} spot_t;

/* Build the case of `op` whose label is `label` and generate its inputs. */
static void spot_open(spot_t *s, const char *op, const char *label)
{
	s->op = tc_open(op, label, &s->c, &s->b);
}

static double *spot_buf(spot_t *s, const char *tensor)
{
	return tc_buf(s->op, &s->c, &s->b, tensor);
}

/* Element `flat` (row-major) of tensor `tensor`. */
static double *spot_el(spot_t *s, const char *tensor, size_t flat)
{
	const kgb_tensor_t *t = kgb_case_tensor(&s->c, tensor);
	if (!t)
		FAIL("operator %s: no tensor %s", s->op->name, tensor);
	return &spot_buf(s, tensor)[kgb_tensor_flat_offset(t, flat)];
}

static void spot_run(spot_t *s)
{
	ASSERT_EQ_INT(s->op->ref(&s->c, &s->b), 0);
}

static void spot_close(spot_t *s)
{
	kgb_hostbufs_release(&s->b);
	kgb_case_release(&s->c);
}

TEST(aten_unary_special_values)
{
	spot_t s;

	spot_open(&s, "acosh", "shape=[7] dtype=f32 layout=contig");
	*spot_el(&s, "self", 0) = 1;
	*spot_el(&s, "self", 1) = 2;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), 0.0, 1e-15);
	ASSERT_NEAR(*spot_el(&s, "out", 1), 1.3169578969248166, 1e-14);
	spot_close(&s);

	spot_open(&s, "polygamma", "shape=[7] dtype=f32 n=1 layout=contig");
	*spot_el(&s, "self", 0) = 1;
	*spot_el(&s, "self", 1) = 0.5;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), M_PI * M_PI / 6, 1e-12);       /* zeta(2) */
	ASSERT_NEAR(*spot_el(&s, "out", 1), M_PI * M_PI / 2, 1e-12);       /* trigamma(1/2) */
	spot_close(&s);

	spot_open(&s, "polygamma", "shape=[7] dtype=f32 n=0 layout=contig");
	*spot_el(&s, "self", 0) = 1;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), -0.5772156649015329, 1e-12);   /* -Euler gamma */
	spot_close(&s);

	spot_open(&s, "i0", "shape=[7] dtype=f32 layout=contig");
	*spot_el(&s, "self", 0) = 1;
	*spot_el(&s, "self", 1) = -3;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), 1.2660658777520082, 1e-13);
	ASSERT_NEAR(*spot_el(&s, "out", 1), 4.880792585865024, 1e-12);
	spot_close(&s);

	spot_open(&s, "bitwise_not", "shape=[7] dtype=i32 layout=contig");
	*spot_el(&s, "self", 0) = 0;
	*spot_el(&s, "self", 1) = -5;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), -1, 0);
	ASSERT_NEAR(*spot_el(&s, "out", 1), 4, 0);
	spot_close(&s);

	/* conjugation flips the imaginary parts only */
	spot_open(&s, "resolve_conj", "shape=[1,2] dtype=f32 layout=contig");
	*spot_el(&s, "self", 0) = 1.5;
	*spot_el(&s, "self", 1) = -2;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), 1.5, 0);
	ASSERT_NEAR(*spot_el(&s, "out", 1), 2, 0);
	spot_close(&s);

	/* logit with eps clamps to the fp32 bounds */
	spot_open(&s, "logit", "shape=[7] dtype=f32 eps=0.05 layout=contig");
	*spot_el(&s, "self", 0) = 0.5;
	*spot_el(&s, "self", 1) = 0.0;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), 0, 1e-15);
	ASSERT_NEAR(*spot_el(&s, "out", 1), log(0.05 / 0.95), 1e-6);
	spot_close(&s);
}

TEST(aten_binary_rounding_and_alpha)
{
	spot_t s;

	spot_open(&s, "sub", "shape=[7] dtype=f32 mode=same alpha=-2.5");
	*spot_el(&s, "self", 0) = 1;
	*spot_el(&s, "other", 0) = 2;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), 6, 0);
	spot_close(&s);

	spot_open(&s, "div", "shape=[7] dtype=i64 mode=same rounding_mode=floor");
	*spot_el(&s, "self", 0) = -7;
	*spot_el(&s, "other", 0) = 2;
	*spot_el(&s, "self", 1) = 7;
	*spot_el(&s, "other", 1) = -2;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), -4, 0);
	ASSERT_NEAR(*spot_el(&s, "out", 1), -4, 0);
	spot_close(&s);

	spot_open(&s, "div", "shape=[7] dtype=i64 mode=same rounding_mode=trunc");
	*spot_el(&s, "self", 0) = -7;
	*spot_el(&s, "other", 0) = 2;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), -3, 0);
	spot_close(&s);

	/* true division of int64 gives fp32 */
	spot_open(&s, "div", "shape=[7] dtype=i64 mode=same rounding_mode=true");
	ASSERT_EQ_INT(kgb_case_tensor(&s.c, "out")->dtype, KGB_DT_F32);
	*spot_el(&s, "self", 0) = -7;
	*spot_el(&s, "other", 0) = 2;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), -3.5, 0);
	spot_close(&s);

	spot_open(&s, "floor_divide", "shape=[7] dtype=i32 mode=scalar");
	*spot_el(&s, "self", 0) = 20;     /* scalar divisor is -7 */
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), -3, 0);
	spot_close(&s);

	spot_open(&s, "logaddexp2", "shape=[7] dtype=f32 mode=same");
	*spot_el(&s, "self", 0) = 1;
	*spot_el(&s, "other", 0) = 1;
	*spot_el(&s, "self", 1) = 0;
	*spot_el(&s, "other", 1) = 0;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), 2, 1e-15);
	ASSERT_NEAR(*spot_el(&s, "out", 1), 1, 1e-15);
	spot_close(&s);

	spot_open(&s, "fmax", "shape=[7] dtype=f32 mode=same");
	*spot_el(&s, "self", 0) = NAN;
	*spot_el(&s, "other", 0) = -3;
	*spot_el(&s, "self", 1) = NAN;
	*spot_el(&s, "other", 1) = NAN;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), -3, 0);
	ASSERT_TRUE(isnan(*spot_el(&s, "out", 1)));
	spot_close(&s);

	spot_open(&s, "heaviside", "shape=[7] dtype=f32 mode=same");
	*spot_el(&s, "self", 0) = 0;
	*spot_el(&s, "other", 0) = 0.75;
	*spot_el(&s, "self", 1) = -2;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), 0.75, 0);
	ASSERT_NEAR(*spot_el(&s, "out", 1), 0, 0);
	spot_close(&s);
}

TEST(aten_reductions_ties_and_minimum)
{
	spot_t s;

	/* argmax returns the first of tied maxima */
	spot_open(&s, "argmax", "shape=[33,65] dtype=f32 dim=last keepdim=0");
	for (size_t j = 0; j < 65; j++)
		*spot_el(&s, "self", j) = 0;
	*spot_el(&s, "self", 10) = 1;
	*spot_el(&s, "self", 20) = 1;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), 10, 0);
	spot_close(&s);

	spot_open(&s, "amin", "shape=[33,65] dtype=f32 dim=first keepdim=1");
	for (size_t i = 0; i < 33; i++)
		*spot_el(&s, "self", i * 65 + 3) = 5;
	*spot_el(&s, "self", 17 * 65 + 3) = -1;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 3), -1, 0);
	spot_close(&s);

	spot_open(&s, "mean", "shape=[33,65] dtype=f32 dim=last keepdim=0");
	for (size_t j = 0; j < 65; j++)
		*spot_el(&s, "self", j) = (double)j;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), 32, 1e-12);
	spot_close(&s);
}

TEST(aten_layout_ops)
{
	spot_t s;

	/* rot90 k=1 of [[1,2,3],[4,5,6]] is [[3,6],[2,5],[1,4]] */
	spot_open(&s, "rot90", "shape=[2,3] dtype=f32 k=1 dims=d01");
	for (size_t i = 0; i < 6; i++)
		*spot_el(&s, "self", i) = (double)(i + 1);
	spot_run(&s);
	{
		static const double want[6] = { 3, 6, 2, 5, 1, 4 };
		for (size_t i = 0; i < 6; i++)
			ASSERT_NEAR(*spot_el(&s, "out", i), want[i], 0);
	}
	spot_close(&s);

	/* im2col: the centre of the first 3x3 patch of a 5x5 ramp is x[1][1] = 6 */
	spot_open(&s, "im2col", "cfg=0 dtype=f32");
	for (size_t i = 0; i < 25; i++)
		*spot_el(&s, "self", i) = (double)i;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 4 * 9 + 0), 6, 0);
	ASSERT_NEAR(*spot_el(&s, "out", 8 * 9 + 8), 24, 0);   /* last row of the last patch */
	spot_close(&s);

	/* arange(-7, 10, 3) in int32 */
	spot_open(&s, "arange", "dtype=i32 start=-7 end=10 step=3");
	ASSERT_EQ_INT(kgb_case_tensor(&s.c, "out")->numel, 6);
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 5), 8, 0);
	spot_close(&s);
}

TEST(aten_gemm_and_losses)
{
	spot_t s;

	/* mnk = [M, N, K]: self [7, 5] of ones but self[0][0] = 2, mat2 [5, 13] of ones */
	spot_open(&s, "mm", "mnk=[7,13,5] dtype=f32 layout=nn");
	for (size_t i = 0; i < 7 * 5; i++)
		*spot_el(&s, "self", i) = 1;
	for (size_t i = 0; i < 5 * 13; i++)
		*spot_el(&s, "mat2", i) = 1;
	*spot_el(&s, "self", 0) = 2;
	*spot_el(&s, "mat2", 1) = -3;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), 6, 1e-12);
	ASSERT_NEAR(*spot_el(&s, "out", 1), -2, 1e-12);     /* 2 * -3 + 4 */
	ASSERT_NEAR(*spot_el(&s, "out", 13), 5, 1e-12);
	ASSERT_NEAR(*spot_el(&s, "out", 14), 1, 1e-12);     /* -3 + 4 */
	spot_close(&s);

	/* matmul of two vectors is their dot product (0-d) */
	spot_open(&s, "matmul", "cfg=0 dtype=f32 layout=nn");
	for (size_t i = 0; i < 65; i++) {
		*spot_el(&s, "self", i) = 1;
		*spot_el(&s, "other", i) = (double)i;
	}
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), 64 * 65 / 2, 1e-9);
	spot_close(&s);

	spot_open(&s, "huber_loss", "shape=[7] dtype=f32 reduction=none delta=1");
	*spot_el(&s, "self", 0) = 0.5;
	*spot_el(&s, "target", 0) = 0;
	*spot_el(&s, "self", 1) = 3;
	*spot_el(&s, "target", 1) = 0;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), 0.125, 1e-15);
	ASSERT_NEAR(*spot_el(&s, "out", 1), 2.5, 1e-15);
	spot_close(&s);

	spot_open(&s, "binary_cross_entropy_with_logits",
	          "shape=[7] dtype=f32 reduction=none weight=0 pos_weight=0");
	*spot_el(&s, "self", 0) = 0;
	*spot_el(&s, "target", 0) = 1;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "out", 0), log(2.0), 1e-15);
	spot_close(&s);
}

TEST(aten_backward_scatter_sums)
{
	spot_t s;

	/* reflection_pad1d (1, 1) of width 8: positions 1 and 6 receive two gradients */
	spot_open(&s, "reflection_pad1d_backward", "shape=[3,8] dtype=f32 pad_left=1 pad_right=1");
	for (size_t i = 0; i < 30; i++)
		*spot_el(&s, "grad_output", i) = 1;
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "grad_input", 0), 1, 0);
	ASSERT_NEAR(*spot_el(&s, "grad_input", 1), 2, 0);
	ASSERT_NEAR(*spot_el(&s, "grad_input", 6), 2, 0);
	ASSERT_NEAR(*spot_el(&s, "grad_input", 7), 1, 0);
	spot_close(&s);

	/* upsampling 4x4 -> 8x8: every input pixel collects 4 gradients */
	spot_open(&s, "upsample_nearest2d_backward", "input_size=[1,1,4,4] dtype=f32 output_size=[8,8]");
	for (size_t i = 0; i < 64; i++)
		*spot_el(&s, "grad_output", i) = 1;
	spot_run(&s);
	for (size_t i = 0; i < 16; i++)
		ASSERT_NEAR(*spot_el(&s, "grad_input", i), 4, 0);
	spot_close(&s);

	/* index_put_ with accumulate adds repeated indices */
	spot_open(&s, "index_put_", "cfg=0 dtype=f32 accumulate=1 values=full");
	for (size_t i = 0; i < 100; i++)
		*spot_el(&s, "self", i) = 0;
	for (size_t i = 0; i < 7; i++) {
		*spot_el(&s, "in0", i) = 3;
		*spot_el(&s, "values", i) = 1;
	}
	spot_run(&s);
	ASSERT_NEAR(*spot_el(&s, "self", 3), 7, 0);
	ASSERT_NEAR(*spot_el(&s, "self", 4), 0, 0);
	spot_close(&s);
}

TEST(aten_sort_stable_ties)
{
	spot_t s;
	static const double in[7] = { 2, 1, 2, 0, 1, 2, -1 };
	static const double want_v[7] = { 2, 2, 2, 1, 1, 0, -1 };
	static const double want_i[7] = { 0, 2, 5, 1, 4, 3, 6 };

	spot_open(&s, "sort", "shape=[7] dtype=f32 dim=-1 descending=1 stable=1");
	for (size_t i = 0; i < 7; i++)
		*spot_el(&s, "self", i) = in[i];
	spot_run(&s);
	for (size_t i = 0; i < 7; i++) {
		ASSERT_NEAR(*spot_el(&s, "values", i), want_v[i], 0);
		ASSERT_NEAR(*spot_el(&s, "indices", i), want_i[i], 0);
	}
	spot_close(&s);
}
