/* cublasSgemm_v2, column-major: C = alpha * op(A) * op(B) + beta * C, C is m x n.
 * op(A)(i, l) = transa ? A[l + i*lda] : A[i + l*lda]; op(B)(l, j) likewise with ldb.
 * One work-item per element of C. */
__kernel void sgemm(__global const float *A, __global const float *B, __global float *C,
                    int m, int n, int k, int lda, int ldb, int ldc, int transa, int transb,
                    float alpha, float beta)
{
	int i = get_global_id(0);
	int j = get_global_id(1);
	if (i >= m || j >= n)
		return;
	float acc = 0.0f;
	for (int l = 0; l < k; l++) {
		float a = transa ? A[l + (long)i * lda] : A[i + (long)l * lda];
		float b = transb ? B[j + (long)l * ldb] : B[l + (long)j * ldb];
		acc += a * b;
	}
	long c = i + (long)j * ldc;
	C[c] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[c];
}
