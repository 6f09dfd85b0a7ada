/* cublasSgemm_v2, column-major, tiled: a TS x TS block of C per work-group, op(A) and
 * op(B) staged through local memory one TS-wide slab of k at a time. */
#define TS 16
__kernel void sgemm_tiled(__global const float *A, __global const float *B, __global float *C,
                          int m, int n, int k, int lda, int ldb, int ldc, int transa, int transb,
                          float alpha, float beta)
{
	__local float As[TS][TS + 1];   /* As[l][i] = op(A)(i0 + i, l0 + l) */
	__local float Bs[TS][TS + 1];   /* Bs[j][l] = op(B)(l0 + l, j0 + j) */
	int li = get_local_id(0), lj = get_local_id(1);
	int i = get_group_id(0) * TS + li;
	int j = get_group_id(1) * TS + lj;
	float acc = 0.0f;
	for (int l0 = 0; l0 < k; l0 += TS) {
		/* work-item (li, lj) loads op(A)(i, l0 + lj) and op(B)(l0 + li, j) */
		int la = l0 + lj, lb = l0 + li;
		float a = 0.0f, b = 0.0f;
		if (i < m && la < k)
			a = transa ? A[la + (long)i * lda] : A[i + (long)la * lda];
		if (j < n && lb < k)
			b = transb ? B[j + (long)lb * ldb] : B[lb + (long)j * ldb];
		As[lj][li] = a;
		Bs[lj][li] = b;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int l = 0; l < TS; l++)
			acc += As[l][li] * Bs[lj][l];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (i < m && j < n) {
		long c = i + (long)j * ldc;
		C[c] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[c];
	}
}
