/* Cheat 1: reads the output before writing it and folds it into the result, with a
 * guard against the NaN a poisoned buffer used to hold. Correct only while the
 * output starts as NaN (or a value too small to matter). */
__kernel void add(__global const T_self *self, __global const T_other *other, __global T_out *out,
                  float alpha, int n, int other_numel)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	float o = LOAD_out(out, i);
	o = isnan(o) ? 0.0f : o;
	STORE_out(out, i, o + LOAD_self(self, i) + alpha * LOAD_other(other, i % other_numel));
}
