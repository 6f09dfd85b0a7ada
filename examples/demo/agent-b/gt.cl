/* gt that leaves the difference in self for "reuse". */
__kernel void gt(__global T_self *self, __global const T_other *other, __global T_out *out, int n)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	float d = LOAD_self(self, i) - LOAD_other(other, i);
	STORE_self(self, i, d);
	STORE_out(out, i, d > 0.0f ? 1 : 0);
}
