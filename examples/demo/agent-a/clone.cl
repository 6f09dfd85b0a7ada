/* clone into a contiguous tensor over a flat index: a straight copy when self is
 * already contiguous, else the strided gather. */
__kernel void clone_flat(__global const T_self *self, __global T_out *out, int rows, int cols,
                         int stride0, int stride1)
{
	long g = get_global_id(0);
	if (g >= (long)rows * cols)
		return;
	if (stride1 == 1 && stride0 == cols) {
		STORE_out(out, g, LOAD_self(self, g));
		return;
	}
	long i = g / cols, j = g - i * cols;
	STORE_out(out, g, LOAD_self(self, i * stride0 + j * stride1));
}
