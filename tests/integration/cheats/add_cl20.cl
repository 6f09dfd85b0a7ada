/* The honest add, compiled as OpenCL C 2.0 (the control for the stateful path). */
__kernel void add(__global const T_self *self, __global const T_other *other, __global T_out *out,
                  float alpha, int n, int other_numel)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	STORE_out(out, i, LOAD_self(self, i) + alpha * LOAD_other(other, i % other_numel));
}
