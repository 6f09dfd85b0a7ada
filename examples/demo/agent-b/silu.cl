/* silu with the element count passed explicitly. */
__kernel void silu(__global const T_self *self, __global T_out *out, int n)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	float x = LOAD_self(self, i);
	STORE_out(out, i, x / (1.0f + exp(-x)));
}
