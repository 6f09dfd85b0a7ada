/* add with the broadcast folded into one index expression. */
__kernel void add_bcast(__global const T_self *self, __global const T_other *other, __global T_out *out,
                        float alpha, int n, int other_numel)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	float b = LOAD_other(other, i % other_numel)
	STORE_out(out, i, LOAD_self(self, i) + alpha * b);
}
