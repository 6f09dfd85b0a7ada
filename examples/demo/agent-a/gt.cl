/* gt: the comparison stored as a byte directly. */
__kernel void gt_byte(__global const T_self *self, __global const T_other *other, __global T_out *out, int n)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	out[i] = (uchar)(LOAD_self(self, i) > LOAD_other(other, i));
}
