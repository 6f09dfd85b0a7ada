/* Never finishes: the executor is busy in this kernel when the test kills it. */
__kernel void add(__global const T_self *self, __global const T_other *other, __global T_out *out,
                  float alpha, int n, int other_numel)
{
	int i = get_global_id(0);
	while (n > 0) {
		if (i < 0)
			break;
		STORE_out(out, 0, LOAD_self(self, 0));
	}
}
