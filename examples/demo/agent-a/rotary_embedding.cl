/* vllm rotary_embedding, neox style: one work-item per (rotation pair, head, token);
 * heads num_heads.. num_heads+num_kv_heads-1 are the key's. */
__kernel void rotary_neox_heads(__global const T_positions *positions, __global T_query *query,
                                __global T_key *key, __global const T_cos_sin_cache *cache,
                                int tokens, int num_heads, int num_kv_heads, int head_size, int rot_dim)
{
	int i = get_global_id(0);
	int h = get_global_id(1);
	int t = get_global_id(2);
	int half_dim = rot_dim / 2;
	if (i >= half_dim || h >= num_heads + num_kv_heads || t >= tokens)
		return;
	long pos = (long)LOAD_positions(positions, t);
	float c = LOAD_cos_sin_cache(cache, pos * rot_dim + i);
	float s = LOAD_cos_sin_cache(cache, pos * rot_dim + half_dim + i);
	if (h < num_heads) {
		long o = ((long)t * num_heads + h) * head_size;
		float x1 = LOAD_query(query, o + i);
		float x2 = LOAD_query(query, o + i + half_dim);
		STORE_query(query, o + i, x1 * c - x2 * s);
		STORE_query(query, o + i + half_dim, x2 * c + x1 * s);
	} else {
		long o = ((long)t * num_kv_heads + (h - num_heads)) * head_size;
		float x1 = LOAD_key(key, o + i);
		float x2 = LOAD_key(key, o + i + half_dim);
		STORE_key(key, o + i, x1 * c - x2 * s);
		STORE_key(key, o + i + half_dim, x2 * c + x1 * s);
	}
}
