/* gt: out = self > other (bool). */
__kernel void gt(__global const T_self *self, __global const T_other *other, __global T_out *out, int n)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	STORE_out(out, i, LOAD_self(self, i) > LOAD_other(other, i) ? 1 : 0);
}
