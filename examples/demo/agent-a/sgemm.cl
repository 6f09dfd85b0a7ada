/* cublasSgemm_v2, column-major, register-blocked: a work-item computes C(i, j0..j0+3),
 * so each element of op(A) is loaded once for four columns. */
__kernel void sgemm_rb4(__global const float *A, __global const float *B, __global float *C,
                        int m, int n, int k, int lda, int ldb, int ldc, int transa, int transb,
                        float alpha, float beta)
{
	int i = get_global_id(0);
	int j0 = get_global_id(1) * 4;
	if (i >= m)
		return;
	float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
	for (int l = 0; l < k; l++) {
		float a = transa ? A[l + (long)i * lda] : A[i + (long)l * lda];
		for (int q = 0; q < 4; q++) {
			int j = min(j0 + q, n - 1);   /* columns past n are computed, never stored */
			float b = transb ? B[j + (long)l * ldb] : B[l + (long)j * ldb];
			acc[q] += a * b;
		}
	}
	for (int q = 0; q < 4; q++) {
		int j = j0 + q;
		if (j < n) {
			long c = i + (long)j * ldc;
			C[c] = beta == 0.0f ? alpha * acc[q] : alpha * acc[q] + beta * C[c];
		}
	}
}
