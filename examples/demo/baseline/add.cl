/* add: out = self + alpha * other, other broadcast over self by index i % other_numel. */
__kernel void add(__global const T_self *self, __global const T_other *other, __global T_out *out,
                  float alpha, int n, int other_numel)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	float a = LOAD_self(self, i);
	float b = LOAD_other(other, i % other_numel);
	STORE_out(out, i, a + alpha * b);
}
