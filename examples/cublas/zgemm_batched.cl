/* cublasZgemmBatched: for every item b, C_b = alpha * op(A_b) * op(B_b) + beta * C_b,
 * complex double, where matrix X_b starts at element Xarray[b] of X's buffer (kgb's
 * form of cuBLAS's pointer arrays). One work-item per element of one C_b. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

static double2 zmul(double2 a, double2 b)
{
	return (double2)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

__kernel void zgemm_batched(__global const double2 *A, __global const double2 *B, __global double2 *C,
                            __global const long *Aarray, __global const long *Barray,
                            __global const long *Carray, int m, int n, int k, int lda, int ldb, int ldc,
                            int ta, int tb, double ar, double ai, double br, double bi)
{
	int i = get_global_id(0), j = get_global_id(1), bt = get_global_id(2);
#ifdef ASSUME_STRIDED
	/* a planted defect for the tests: ignores the arrays, takes item bt from slot bt */
	__global const double2 *a0 = A + (long)bt * SA, *b0 = B + (long)bt * SB;
	__global double2 *c0 = C + (long)bt * SC;
#else
	__global const double2 *a0 = A + Aarray[bt], *b0 = B + Barray[bt];
	__global double2 *c0 = C + Carray[bt];
#endif
	double2 s = (double2)(0.0, 0.0), r;
	if (i >= m || j >= n)
		return;
	for (int p = 0; p < k; p++) {
		double2 a = ta == 0 ? a0[i + (long)p * lda] : a0[p + (long)i * lda];
		double2 b = tb == 0 ? b0[p + (long)j * ldb] : b0[j + (long)p * ldb];
		if (ta == 2)
			a.y = -a.y;
		if (tb == 2)
			b.y = -b.y;
		s += zmul(a, b);
	}
	r = zmul((double2)(ar, ai), s);
	if (br != 0.0 || bi != 0.0)
		r += zmul((double2)(br, bi), c0[i + (long)j * ldc]);
	c0[i + (long)j * ldc] = r;
}
