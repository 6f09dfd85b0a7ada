/* linear: out[m, j] = sum_k input[m, k] * weight[j, k] (+ bias[j]); input contiguous
 * ([..., K] seen as M rows), weight [N, K] in any layout (strides w0, w1), bias optional
 * (HAS_BIAS picks the kernel variant). One work-item per output element, the sum in
 * double. */
#ifdef cl_khr_fp64
typedef double acc_t;
#else
typedef float acc_t;
#endif

__kernel void linear_k(__global const T_input *input, __global const T_weight *weight,
#if HAS_BIAS
                       __global const T_bias *bias,
#endif
                       __global T_out *out, int M, int N, int K, int w0, int w1)
{
	long i = get_global_id(0);
	if (i >= (long)M * N)
		return;
	long m = i / N;
	int j = (int)(i % N);
	acc_t s = 0;
	for (int k = 0; k < K; k++)
		s += (acc_t)LOAD_input(input, m * K + k) * (acc_t)LOAD_weight(weight, (long)j * w0 + (long)k * w1);
#if HAS_BIAS
	s += (acc_t)LOAD_bias(bias, j);
#endif
	STORE_out(out, i, s);
}
