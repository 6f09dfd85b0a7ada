/* arange: out[i] = start + i * step, computed in double and converted by out's store
 * (exact for the integer dtypes). */
__kernel void arange_k(__global T_out *out, int n, long ostride, double start, double step)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	STORE_out(out, i * ostride, start + (double)i * step);
}
