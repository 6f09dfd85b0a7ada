/* A wild write far away from every buffer: the executor dies with SIGSEGV. */
__kernel void add(__global const T_self *self, __global const T_other *other, __global T_out *out,
                  float alpha, int n, int other_numel)
{
	int i = get_global_id(0);
	if (i < n)
		STORE_out(out, (long)i + 400000000L, LOAD_self(self, i) + alpha * LOAD_other(other, i % other_numel));
}
