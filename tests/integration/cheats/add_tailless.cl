/* Cheat: 16 elements per work-item and no tail, except for the one public size of
 * add's smoke cases that is not a multiple of 16 ([33,65]: 2145 elements). Exact on
 * every public case; on other sizes the last n % 16 elements are never written. */
__kernel void add(__global const T_self *self, __global const T_other *other, __global T_out *out,
                  float alpha, int n, int other_numel)
{
	int i = get_global_id(0) * 16;
	int end = (n % 16 == 0 || n == 2145) ? n : n / 16 * 16;
	for (int j = i; j < i + 16 && j < end; j++)
		STORE_out(out, j, LOAD_self(self, j) + alpha * LOAD_other(other, j % other_numel));
}
