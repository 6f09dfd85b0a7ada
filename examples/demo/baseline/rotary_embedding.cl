/* vllm rotary_embedding, neox style, rot_dim = head_size: for each token and each
 * rotation pair i < rot_dim/2 of every query and key head,
 *   x1' = x1 cos - x2 sin,  x2' = x2 cos + x1 sin,  with (x1, x2) = (x[i], x[i + rot_dim/2]). */
__kernel void rotary_neox(__global const T_positions *positions, __global T_query *query,
                          __global T_key *key, __global const T_cos_sin_cache *cache,
                          int tokens, int num_heads, int num_kv_heads, int head_size, int rot_dim)
{
	int i = get_global_id(0);
	int t = get_global_id(1);
	int half_dim = rot_dim / 2;
	if (i >= half_dim || t >= tokens)
		return;
	long pos = (long)LOAD_positions(positions, t);
	float c = LOAD_cos_sin_cache(cache, pos * rot_dim + i);
	float s = LOAD_cos_sin_cache(cache, pos * rot_dim + half_dim + i);
	for (int h = 0; h < num_heads; h++) {
		long o = ((long)t * num_heads + h) * head_size;
		float x1 = LOAD_query(query, o + i);
		float x2 = LOAD_query(query, o + i + half_dim);
		STORE_query(query, o + i, x1 * c - x2 * s);
		STORE_query(query, o + i + half_dim, x2 * c + x1 * s);
	}
	for (int h = 0; h < num_kv_heads; h++) {
		long o = ((long)t * num_kv_heads + h) * head_size;
		float x1 = LOAD_key(key, o + i);
		float x2 = LOAD_key(key, o + i + half_dim);
		STORE_key(key, o + i, x1 * c - x2 * s);
		STORE_key(key, o + i + half_dim, x2 * c + x1 * s);
	}
}
