/* cublasSgemm_v2, column-major: C = alpha * op(A) op(B) + beta * C. A TS x TS tile of
 * C per block, op(A) and op(B) staged through shared memory. */
#define TS 16
extern "C" __global__ void sgemm_kernel(const float *A, const float *B, float *C, int m, int n, int k,
                                        int lda, int ldb, int ldc, int transa, int transb, float alpha,
                                        float beta)
{
	__shared__ float As[TS][TS + 1];
	__shared__ float Bs[TS][TS + 1];
	int li = threadIdx.x, lj = threadIdx.y;
	int i = blockIdx.x * TS + li;
	int j = blockIdx.y * TS + lj;
	float acc = 0.0f;
	for (int l0 = 0; l0 < k; l0 += TS) {
		int la = l0 + lj, lb = l0 + li;
		float a = 0.0f, b = 0.0f;
		if (i < m && la < k)
			a = transa ? A[la + (long)i * lda] : A[i + (long)la * lda];
		if (j < n && lb < k)
			b = transb ? B[j + (long)lb * ldb] : B[lb + (long)j * ldb];
		As[lj][li] = a;
		Bs[lj][li] = b;
		__syncthreads();
		for (int l = 0; l < TS; l++)
			acc += As[l][li] * Bs[lj][l];
		__syncthreads();
	}
	if (i < m && j < n) {
		long c = i + (long)j * ldc;
		C[c] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[c];
	}
}
