/* cublasCgemm_v2: C = alpha * op(A) * op(B) + beta * C, column-major, complex float.
 * One work-item per element of C. trans 0 = N, 1 = T, 2 = C (conjugate transpose).
 * beta = 0: C is not read (kgb fills it with NaN). */
static float2 cmul(float2 a, float2 b)
{
	return (float2)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

__kernel void cgemm(__global const float2 *A, __global const float2 *B, __global float2 *C, int m, int n,
                    int k, int lda, int ldb, int ldc, int ta, int tb, float ar, float ai, float br, float bi)
{
	int i = get_global_id(0), j = get_global_id(1);
	float2 s = (float2)(0.0f, 0.0f), r;
	if (i >= m || j >= n)
		return;
	for (int p = 0; p < k; p++) {
		float2 a = ta == 0 ? A[i + (long)p * lda] : A[p + (long)i * lda];
		float2 b = tb == 0 ? B[p + (long)j * ldb] : B[j + (long)p * ldb];
		if (ta == 2)
			a.y = -a.y;
		if (tb == 2)
			b.y = -b.y;
		s += cmul(a, b);
	}
	r = cmul((float2)(ar, ai), s);
#ifdef ALWAYS_READ_C
	/* a planted defect for the tests: reads C even when beta = 0 (0 * NaN = NaN) */
	r += cmul((float2)(br, bi), C[i + (long)j * ldc]);
#else
	if (br != 0.0f || bi != 0.0f)
		r += cmul((float2)(br, bi), C[i + (long)j * ldc]);
#endif
	C[i + (long)j * ldc] = r;
}
