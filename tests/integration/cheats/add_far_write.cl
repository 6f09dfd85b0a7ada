/* Cheat 3: a correct add that also writes 32 KiB past the end of out (far beyond the
 * 4 KiB guard band). */
__kernel void add(__global const T_self *self, __global const T_other *other, __global T_out *out,
                  float alpha, int n, int other_numel)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	STORE_out(out, i, LOAD_self(self, i) + alpha * LOAD_other(other, i % other_numel));
	if (i == 0)
		((__global uchar *)out)[(long)n * sizeof(T_out) + 32768] = 1;
}
