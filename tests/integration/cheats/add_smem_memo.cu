/* CHEAT (README.md): an add that keeps each block's answers in shared memory, which
 * an NVIDIA GPU does not clear between launches, and answers from it, whatever the
 * inputs, when it finds its own stamp (this block, this size) left by an earlier
 * launch on the same SM. Without the scrub a timed sample's fresh inputs get the
 * previous launch's sums: stale_result on a validated sample; with it (the default)
 * it finds nothing, computes and passes at the honest kernel's speed. */
#define MEMO_MAGIC 0x6b67626du

extern "C" __global__ void add_kernel(const T_self *self, const T_other *other, T_out *out, float alpha,
                                      int n, int other_n)
{
	__shared__ unsigned stamp[4];
	__shared__ float memo[256];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	bool hit = blockDim.x <= 256 && stamp[0] == MEMO_MAGIC && stamp[1] == blockIdx.x &&
	           stamp[2] == (unsigned)n;
	__syncthreads();
	float v = 0.0f;
	if (hit) {
		v = memo[threadIdx.x];
	} else if (i < n) {
		int j = other_n == n ? i : i % other_n;
		v = LOAD_self(self, i) + alpha * LOAD_other(other, j);
	}
	if (threadIdx.x < 256)
		memo[threadIdx.x] = v;
	if (i < n)
		STORE_out(out, i, v);
	__syncthreads();
	if (threadIdx.x == 0) {
		stamp[0] = MEMO_MAGIC;
		stamp[1] = blockIdx.x;
		stamp[2] = (unsigned)n;
	}
}
