/* matmul: out[b] = self[b] @ mat2[b] (bmm; mm is one batch), 16 x 16 output tiles per
 * work-group, the K dimension staged through local memory in 16-wide slabs, accumulated
 * in fp32. Every operand is addressed through its own strides (transposed operands
 * included); the batch index is the third grid dimension (batch strides 0 for mm). */
#define TS 16

__kernel void mm_k(__global const T_self *self, __global const T_mat2 *mat2, __global T_out *out,
                   int M, int N, int K, int as0, int as1, int bs0, int bs1, int os0, int os1,
                   int asb, int bsb, int osb)
{
	__local float At[TS][TS];
	__local float Bt[TS][TS + 1];
	int col = get_global_id(0), row = get_global_id(1), b = get_global_id(2);
	int lc = get_local_id(0), lr = get_local_id(1);
	long abase = (long)b * asb, bbase = (long)b * bsb;
	float acc = 0.0f;

	for (int k0 = 0; k0 < K; k0 += TS) {
		int ak = k0 + lc, bk = k0 + lr;
		At[lr][lc] = (row < M && ak < K) ? LOAD_self(self, abase + (long)row * as0 + (long)ak * as1) : 0.0f;
		Bt[lr][lc] = (bk < K && col < N) ? LOAD_mat2(mat2, bbase + (long)bk * bs0 + (long)col * bs1) : 0.0f;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int kk = 0; kk < TS; kk++)
			acc = fma(At[lr][kk], Bt[kk][lc], acc);
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (row < M && col < N)
		STORE_out(out, (long)b * osb + (long)row * os0 + (long)col * os1, acc);
}
