/* silu: out = x * (1 / (1 + exp(-x))), one element per work-item in large work-groups
 * (the CPU compiler vectorises across work-items). */
__kernel void silu_mul(__global const T_self *self, __global T_out *out, int n)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	float x = LOAD_self(self, i);
	STORE_out(out, i, x * (1.0f / (1.0f + exp(-x))));
}
