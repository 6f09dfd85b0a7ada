/* clone of a 2-d tensor into a contiguous one through a 16 x 16 tile in local memory,
 * so that both the strided reads and the contiguous writes stay within a tile. */
#define TILE 16
__kernel void clone_tiled(__global const T_self *self, __global T_out *out, int rows, int cols,
                          int stride0, int stride1)
{
	__local float tile[TILE][TILE + 1];
	int lj = get_local_id(0), li = get_local_id(1);
	int j = get_group_id(0) * TILE + lj;
	int i = get_group_id(1) * TILE + li;
	if (i < rows && j < cols)
		tile[li][lj] = LOAD_self(self, (long)i * stride0 + (long)j * stride1);
	barrier(CLK_LOCAL_MEM_FENCE);
	if (i < rows && j < cols)
		STORE_out(out, (long)i * cols + j, tile[li][lj]);
}
