/* cublasSgemm_v2, column-major: one work-item per column of C, looping over its rows. */
__kernel void sgemm_cols(__global const float *A, __global const float *B, __global float *C,
                         int m, int n, int k, int lda, int ldb, int ldc, int transa, int transb,
                         float alpha, float beta)
{
	int j = get_global_id(0);
	if (j >= n)
		return;
	for (int i = 0; i < m; i++) {
		float acc = 0.0f;
		for (int l = 0; l < k; l++) {
			float a = transa ? A[l + (long)i * lda] : A[i + (long)l * lda];
			float b = transb ? B[j + (long)l * ldb] : B[l + (long)j * ldb];
			acc += a * b;
		}
		long c = i + (long)j * ldc;
		C[c] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[c];
	}
}
