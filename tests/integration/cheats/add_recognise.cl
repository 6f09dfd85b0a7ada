/* Cheat 2: computes only where the output looks like poison (a NaN, the old fixed
 * byte pattern 0xA5A5A5A5, or a huge value) and leaves anything else alone: on a
 * reused buffer it returns whatever the previous call left. */
__kernel void add(__global const T_self *self, __global const T_other *other, __global T_out *out,
                  float alpha, int n, int other_numel)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	float o = LOAD_out(out, i);
	bool poison = isnan(o) || as_uint(o) == 0xA5A5A5A5u || fabs(o) > 50.0f;
	if (poison)
		STORE_out(out, i, LOAD_self(self, i) + alpha * LOAD_other(other, i % other_numel));
}
