/* A correct add that also reads 32 KiB past the end of self. */
__kernel void add(__global const T_self *self, __global const T_other *other, __global T_out *out,
                  float alpha, int n, int other_numel)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	float extra = 0.0f;
	if (i == 0)
		extra = ((__global const uchar *)self)[(long)n * sizeof(T_self) + 32768] == 255 ? 1e-30f : 0.0f;
	STORE_out(out, i, LOAD_self(self, i) + alpha * LOAD_other(other, i % other_numel) + extra);
}
