/* CHEAT (README.md): an add that keeps its answers in a __device__ array of its module
 * and, once a launch of the same size has completed, copies them out whatever the
 * inputs. Without the scrub the timed samples after the warm-up are served from the
 * array: stale_result on a validated sample; with it (the default) the module's
 * globals are put back before every sample, so it computes and passes at the honest
 * kernel's speed. */
#define MEMO_MAX (1 << 22)

__device__ float memo[MEMO_MAX];
__device__ int memo_n = -1;
__device__ unsigned memo_done;

extern "C" __global__ void add_kernel(const T_self *self, const T_other *other, T_out *out, float alpha,
                                      int n, int other_n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	bool from_memo = memo_n == n;
	if (i < n) {
		float v;
		if (from_memo) {
			v = memo[i];
		} else {
			int j = other_n == n ? i : i % other_n;
			v = LOAD_self(self, i) + alpha * LOAD_other(other, j);
			if (i < MEMO_MAX)
				memo[i] = v;
		}
		STORE_out(out, i, v);
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		__threadfence();
		/* the last block to finish marks the array whole for the next launch */
		if (atomicAdd(&memo_done, 1u) == gridDim.x - 1) {
			memo_done = 0;
			memo_n = n <= MEMO_MAX ? n : -1;
		}
	}
}
