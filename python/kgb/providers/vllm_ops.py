"""The native provider for kgb's vLLM operators.

Where `import vllm` works (and the operator has an adapter below), the case runs vLLM's
own kernel through torch.ops (`torch.ops._C`, `torch.ops._moe_C`,
`torch.ops._C_cache_ops`), labelled "vllm <version>". Elsewhere (vLLM installs only on
some machines) the operator runs as a PyTorch composite: the computation vLLM's own
tests use as their reference (tests/kernels/...: RMSNorm.forward_native, the
torch-indexing references of the cache, MoE and permutation tests, the
merge-attention-states, paged-attention and selective-scan references, the Marlin and
GPTQ packing utilities), written here for kgb's tensor names and layouts and labelled
"composite (torch <version>)". They are plain torch and run on any device;
convert_vertical_slash_indexes alone runs its per-row merge on the CPU.

Each function takes (case, inputs) with inputs from case.inputs("torch", device) and
returns {name: tensor} for every OUT and INOUT tensor of the case; INOUT tensors are
updated in place (their strides and padding stay kgb's). COMPOSITES lists what is
covered; docs/native.md lists the operators that are not."""
import torch


def _f(x):
    return x.float()


# ---- PyTorch composites ----

def _rms_norm(case, a):
    x, w = a["input"], a["weight"]
    eps = float(case.scalars["epsilon"])
    xf = _f(x)
    y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)
    return {"out": y.to(x.dtype) * w}


def _fused_add_rms_norm(case, a):
    x, r, w = a["input"], a["residual"], a["weight"]
    eps = float(case.scalars["epsilon"])
    z = (_f(x) + _f(r)).to(x.dtype)        # the residual stream, stored in the element type
    r.copy_(z)
    zf = _f(z)
    y = zf * torch.rsqrt(zf.pow(2).mean(dim=-1, keepdim=True) + eps)
    x.copy_(y.to(x.dtype) * w)
    return {"input": x, "residual": r}


def _moe_sum(case, a):
    x = a["input"]
    return {"output": x.sum(dim=1, dtype=torch.float32).to(x.dtype)}


def _shuffle_rows(case, a):
    return {"output_tensor": a["input_tensor"].index_select(0, a["dst2src_map"].long())}


def _permute_cols(case, a):
    return {"out": a["A"].index_select(1, a["perm"].long())}


def _swap_blocks(case, a):
    m = a["block_mapping"].long()
    dst = a["dst"]
    dst[m[:, 1]] = a["src"][m[:, 0]]
    return {"dst": dst}


def _copy_blocks(case, a):
    m = a["block_mapping"].long()
    res = {}
    for t in case.tensors:
        if t.role == "inout":
            c = a[t.name]
            c[m[:, 1]] = c[m[:, 0]]           # sources and destinations are distinct
            res[t.name] = c
    return res


def _merge_attn_states(case, a):
    po, so = a["prefix_output"], a["suffix_output"]
    pl, sl = a["prefix_lse"].clone(), a["suffix_lse"].clone()      # [heads, tokens]
    pl[torch.isinf(pl)] = float("-inf")
    sl[torch.isinf(sl)] = float("-inf")
    m = torch.maximum(pl, sl)
    pe, se = torch.exp(pl - m), torch.exp(sl - m)
    tot = pe + se
    pw = (pe / tot).transpose(0, 1).unsqueeze(-1)                  # [tokens, heads, 1]
    sw = (se / tot).transpose(0, 1).unsqueeze(-1)
    out = (_f(po) * pw + _f(so) * sw).to(po.dtype)
    return {"output": out, "output_lse": torch.log(tot) + m}


def _apply_repetition_penalties(case, a):
    logits = a["logits"]
    mask = a["prompt_mask"] | a["output_mask"]
    pen = a["repetition_penalties"].unsqueeze(1)
    lf = _f(logits)
    pen_l = torch.where(lf > 0, lf / pen, lf * pen)
    logits.copy_(torch.where(mask, pen_l, lf).to(logits.dtype))
    return {"logits": logits}


def _hadacore_transform(case, a):
    x = a["x"]
    rows, n = x.shape
    v = _f(x).reshape(rows, n)
    h = 1
    while h < n:                              # Walsh-Hadamard butterflies, Sylvester order
        w = v.view(rows, n // (2 * h), 2, h)
        v = torch.stack((w[:, :, 0] + w[:, :, 1], w[:, :, 0] - w[:, :, 1]), dim=2).reshape(rows, n)
        h *= 2
    x.copy_((v / float(n) ** 0.5).to(x.dtype))
    return {"x": x}


def _topk_softmax(case, a):
    g = _f(a["gating_output"])
    T = g.shape[0]
    k = case.tensor("topk_weights").shape[1]
    p = torch.softmax(g, dim=-1)
    # the largest first; a tie goes to the lower expert index (a stable sort)
    idx = torch.sort(g, dim=-1, descending=True, stable=True).indices[:, :k]
    w = p.gather(1, idx)
    if int(case.scalars["renormalize"]):
        w = w / w.sum(dim=-1, keepdim=True)
    dev = g.device
    src = torch.arange(k, device=dev).unsqueeze(0) * T + torch.arange(T, device=dev).unsqueeze(1)
    return {"topk_weights": w, "topk_indices": idx.to(torch.int32), "token_expert_indices": src.to(torch.int32)}


def _rotary_embedding(case, a):
    pos = a["positions"].long()
    cache = a["cos_sin_cache"]
    hs, neox = int(case.symbols["head_size"]), int(case.symbols["is_neox"])
    rot = cache.shape[1]
    half = rot // 2
    cs = _f(cache.index_select(0, pos))
    cos, sin = cs[:, :half].unsqueeze(1), cs[:, half:].unsqueeze(1)     # [tokens, 1, half]
    res = {}
    for name in ("query", "key"):
        t = a[name]
        v = _f(t).reshape(t.shape[0], -1, hs)
        r = v[..., :rot]
        if neox:
            x1, x2 = r[..., :half], r[..., half:]
        else:
            x1, x2 = r[..., 0::2], r[..., 1::2]
        o1, o2 = x1 * cos - x2 * sin, x2 * cos + x1 * sin
        new = torch.cat((o1, o2), dim=-1) if neox else torch.stack((o1, o2), dim=-1).flatten(-2)
        t.copy_(torch.cat((new, v[..., rot:]), dim=-1).reshape(t.shape).to(t.dtype))
        res[name] = t
    return res


def _cache_store(case, x, scale):
    """What a cache of the case holds for x: x itself ("auto"), or the fp8 bytes of
    x / scale, saturated to the format's largest finite value (kgb keeps fp8 caches as
    uint8 tensors)."""
    kv = case.params.get("kv_cache_dtype", "auto")
    if not kv.startswith("fp8"):
        return x
    dt, mx = (torch.float8_e5m2, 57344.0) if kv == "fp8_e5m2" else (torch.float8_e4m3fn, 448.0)
    return (_f(x) / _f(scale)).clamp(-mx, mx).to(dt).view(torch.uint8)


def _slots(a, block_size):
    sm = a["slot_mapping"]
    tok = (sm >= 0).nonzero().squeeze(1)      # padding tokens have slot -1
    slots = sm.index_select(0, tok)
    return tok, slots // block_size, slots % block_size


def _reshape_and_cache(case, a):
    kc, vc = a["key_cache"], a["value_cache"]      # [blocks, heads, D/x, block, x], [blocks, heads, D, block]
    bs, x = kc.shape[3], kc.shape[4]
    tok, blk, off = _slots(a, bs)
    k, v = a["key"].index_select(0, tok), a["value"].index_select(0, tok)
    n, h, d = k.shape
    kc[blk, :, :, off, :] = _cache_store(case, k, a["k_scale"]).reshape(n, h, d // x, x)
    vc[blk, :, :, off] = _cache_store(case, v, a["v_scale"])
    return {"key_cache": kc, "value_cache": vc}


def _reshape_and_cache_flash(case, a):
    kc, vc = a["key_cache"], a["value_cache"]      # [blocks, block, heads, D] (NHD or HND strides)
    tok, blk, off = _slots(a, kc.shape[1])
    kc[blk, off] = _cache_store(case, a["key"].index_select(0, tok), a["k_scale"])
    vc[blk, off] = _cache_store(case, a["value"].index_select(0, tok), a["v_scale"])
    return {"key_cache": kc, "value_cache": vc}


def _concat_and_cache_mla(case, a):
    kc = a["kv_cache"]                             # [blocks, block, kv_lora_rank + pe_dim]
    tok, blk, off = _slots(a, kc.shape[1])
    row = torch.cat((a["kv_c"].index_select(0, tok), a["k_pe"].index_select(0, tok)), dim=1)
    kc[blk, off] = _cache_store(case, row, a["scale"])
    return {"kv_cache": kc}


def _scaled_int8_quant(case, a):
    x = _f(a["input"])
    mode = case.params["mode"]
    q = lambda v: torch.round(v).clamp(-128, 127)          # noqa: E731  (round half to even)
    res = {}
    if mode in ("static", "static_azp"):
        s = _f(a["scale"])
        if mode == "static":
            out = q(x / s)
        else:
            out = q(torch.round(x * (1.0 / s)) + a["azp"].float())
    elif mode == "dynamic":
        m = x.abs().amax(dim=1, keepdim=True)
        inv = torch.where(m == 0, torch.zeros_like(m), 127.0 / m)
        res["scale"] = m / 127.0
        out = q(x * inv)
    else:                                                   # dynamic_azp
        mn, mx = x.amin(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)
        s = (mx - mn) / 255.0
        zp = torch.round(-128.0 - mn / s)
        res["scale"], res["azp"] = s, zp.to(torch.int32)
        out = q(torch.round(x * (1.0 / s)) + zp)
    res["out"] = out.to(torch.int8)
    return res


_F8_MAX = 448.0     # largest finite float8_e4m3fn


def _scaled_fp8_quant(case, a):
    x = _f(a["input"])
    mode = case.params["mode"]
    res = {}
    if mode in ("static", "dynamic"):
        if mode == "dynamic":
            s = (x.abs().amax() / _F8_MAX).reshape(1)
            res["scale"] = s
        else:
            s = _f(a["scale"])
        y = x * (1.0 / s)
    else:                                                   # per_token, per_token_ub
        m = x.abs().amax(dim=1, keepdim=True)
        if "scale_ub" in a:
            m = torch.minimum(m, _f(a["scale_ub"]))
        s = torch.clamp(m / _F8_MAX, min=1.0 / (_F8_MAX * 512.0))
        res["scale"] = s
        y = x / s
    res["out"] = y.clamp(-_F8_MAX, _F8_MAX).to(torch.float8_e4m3fn)
    return res


def _convert_fp8(case, a):
    src = a["src"]
    dst_spec = case.tensor("dst")
    scale = float(case.scalars["scale"])
    if case.params["direction"] == "quant":
        e5m2 = dst_spec.dtype == "f8e5m2"
        dt, mx = (torch.float8_e5m2, 57344.0) if e5m2 else (torch.float8_e4m3fn, 448.0)
        return {"dst": (_f(src) / scale).clamp(-mx, mx).to(dt)}
    import kgb
    return {"dst": (_f(src) * scale).to(kgb.torch_dtype(dst_spec.dtype))}


def _rms_norm_quant(case, a):
    """rms_norm_dynamic_per_token_quant and rms_norm_per_block_quant: RMS norm in f32,
    rounded to the input's dtype, times the weight in that dtype; then int8 or fp8 codes
    with a scale per token or per group of columns."""
    x, w = a["input"], a["weight"]
    eps = float(case.scalars["epsilon"])
    xf = _f(x)
    T, H = x.shape
    rms = torch.rsqrt(xf.pow(2).sum(dim=1, keepdim=True) / H + eps)
    n = _f((xf * rms).to(x.dtype) * w)
    int8 = case.tensor("out").dtype == "i8"
    qmax, floor = (127.0, 2.0 ** -23) if int8 else (_F8_MAX, 1.0 / (_F8_MAX * 512.0))
    G = case.tensor("scales").shape[1]
    amax = n.view(T, G, H // G).abs().amax(dim=-1)          # [tokens, groups]
    if "scale_ub" in a:
        amax = torch.minimum(amax, _f(a["scale_ub"]))
    scales = torch.clamp(amax / qmax, min=floor)
    se = scales.repeat_interleave(H // G, dim=1)
    if int8:
        out = torch.round(n * (1.0 / se)).clamp(-128, 127).to(torch.int8)
    else:
        out = (n / se).clamp(-_F8_MAX, _F8_MAX).to(torch.float8_e4m3fn)
    return {"out": out, "scales": scales}


def _scaled_mm(case, a):
    """cutlass_scaled_mm(_azp): the int8 or fp8 GEMM in f32 (int8 sums are exact there
    for these sizes), the zero-point adjustment, the scales and the bias."""
    acc = _f(a["a"]) @ _f(a["b"])                           # [M, N]
    if "azp_adj" in a:
        z = _f(a["azp"]).view(-1, 1) if "azp" in a else 1.0
        acc = acc - z * _f(a["azp_adj"]).view(1, -1)
    out = acc * _f(a["a_scales"]) * _f(a["b_scales"]).view(1, -1)
    if "bias" in a:
        out = out + _f(a["bias"])
    import kgb
    return {"out": out.to(kgb.torch_dtype(case.tensor("out").dtype))}


def _gather_rows(case, a, block_granular):
    """Row r of dst = sequence q's token i: from logical position p of q's blocks, p =
    seq_starts[q] + i (cp_gather_cache) or whole blocks of seq_starts[q] skipped."""
    src = a["src_cache"]                                    # [blocks, block, entry]
    dev = src.device
    bt, cu = a["block_table"].long(), a["cu_seq_lens"].long()
    bs, tot = src.shape[1], case.tensor("dst").shape[0]
    lens = cu[1:] - cu[:-1]
    q = torch.repeat_interleave(torch.arange(lens.shape[0], device=dev), lens)
    i = torch.arange(tot, device=dev) - cu.index_select(0, q)
    start = a["seq_starts"].long().index_select(0, q) if "seq_starts" in a else torch.zeros_like(i)
    if block_granular:
        start = start // bs * bs
    p = start + i
    return src[bt[q, p // bs], p % bs]


def _cp_gather_cache(case, a):
    return {"dst": _gather_rows(case, a, False)}


def _gather_and_maybe_dequant_cache(case, a):
    rows = _gather_rows(case, a, True)
    kv = case.params.get("kv_cache_dtype", "auto")
    if kv.startswith("fp8"):
        f8 = torch.float8_e5m2 if kv == "fp8_e5m2" else torch.float8_e4m3fn
        import kgb
        rows = (_f(rows.view(f8)) * _f(a["scale"])).to(kgb.torch_dtype(case.tensor("dst").dtype))
    return {"dst": rows}


def _fused_qk_norm_rope(case, a):
    qkv = a["qkv"]
    T = qkv.shape[0]
    nq, nk = int(case.scalars["num_heads_q"]), int(case.scalars["num_heads_k"])
    D, neox = int(case.scalars["head_dim"]), int(case.scalars["is_neox"])
    eps, h = float(case.scalars["eps"]), D // 2
    v = _f(qkv).reshape(T, -1, D)
    x = v[:, :nq + nk]                                      # the q and k heads, in f32
    w = torch.cat((_f(a["q_weight"]).expand(nq, D), _f(a["k_weight"]).expand(nk, D)), dim=0)
    y = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * w
    cs = _f(a["cos_sin_cache"].index_select(0, a["position_ids"].long()))
    cos, sin = cs[:, :h].unsqueeze(1), cs[:, h:].unsqueeze(1)
    if neox:
        y1, y2 = y[..., :h], y[..., h:]
    else:
        y1, y2 = y[..., 0::2], y[..., 1::2]
    o1, o2 = y1 * cos - y2 * sin, y2 * cos + y1 * sin
    r = torch.cat((o1, o2), dim=-1) if neox else torch.stack((o1, o2), dim=-1).flatten(-2)
    qkv.view(T, -1, D)[:, :nq + nk] = r.to(qkv.dtype)
    return {"qkv": qkv}


def _grouped_topk(case, a):
    x = _f(a["scores"])
    T, E = x.shape
    G, TG = int(case.scalars["n_group"]), int(case.scalars["topk_group"])
    k = int(case.scalars["topk"])
    sc = torch.sigmoid(x) if int(case.scalars["scoring_func"]) == 1 else x
    sb = sc + _f(a["bias"])
    # a group's score: the sum of its two largest biased scores; the topk_group best groups
    gscore = sb.view(T, G, E // G).topk(2, dim=-1).values.sum(dim=-1)
    gsel = torch.sort(gscore, dim=-1, descending=True, stable=True).indices[:, :TG]
    keep = torch.zeros((T, G), dtype=torch.bool, device=x.device).scatter(1, gsel, True)
    masked = sb.masked_fill(~keep.repeat_interleave(E // G, dim=1), float("-inf"))
    idx = torch.sort(masked, dim=-1, descending=True, stable=True).indices[:, :k]
    w = sc.gather(1, idx)
    if int(case.scalars["renormalize"]):
        w = w / w.sum(dim=-1, keepdim=True)
    w = w * float(case.scalars["routed_scaling_factor"])
    return {"topk_values": w, "topk_indices": idx.to(torch.int32)}


# ---- MoE alignment: the aligned layouts are checked by invariants (vllm_moe.c), the
# order inside an expert's segment is free; these give ascending token indices ----

def _align(ids, keep, E, bs, sorted_out, eids_out, tail):
    """moe_align_block_size on the flat expert ids (int64) where keep (None: all): fills
    sorted_out (pad numel) and eids_out (tail past the last block) and returns the padded
    total as a 0-d tensor."""
    numel = ids.numel()
    dev = ids.device
    tok = torch.arange(numel, device=dev)
    if keep is not None:
        tok = tok[keep]
    e = ids.index_select(0, tok)
    cnt = torch.bincount(e, minlength=E)
    padded = (cnt + bs - 1) // bs * bs
    start = torch.cumsum(padded, 0) - padded                 # each expert's segment
    first = torch.cumsum(cnt, 0) - cnt                       # its tokens' first rank
    order = torch.sort(e, stable=True).indices               # by expert, ascending token
    es = e.index_select(0, order)
    rank = torch.arange(es.numel(), device=dev)
    pos = start.index_select(0, es) + rank - first.index_select(0, es)
    sorted_out.fill_(numel)
    sorted_out[pos] = tok.index_select(0, order).to(sorted_out.dtype)
    blocks = padded // bs
    be = torch.repeat_interleave(torch.arange(E, device=dev), blocks)
    eids_out.fill_(tail)
    eids_out[:be.numel()] = be.to(eids_out.dtype)
    return padded.sum()


def _moe_align_block_size(case, a):
    ids = a["topk_ids"].reshape(-1).long()
    E, bs = int(case.scalars["num_experts"]), int(case.scalars["block_size"])
    s = torch.empty(case.tensor("sorted_token_ids").shape, dtype=torch.int32, device=ids.device)
    ei = torch.empty(case.tensor("experts_ids").shape, dtype=torch.int32, device=ids.device)
    n = _align(ids, None, E, bs, s, ei, 0)
    return {"sorted_token_ids": s, "experts_ids": ei, "num_tokens_post_pad": n.reshape(1).to(torch.int32)}


def _moe_lora_align_block_size(case, a):
    ids = a["topk_ids"]
    k = ids.shape[1]
    ids = ids.reshape(-1).long()
    dev = ids.device
    E, bs = int(case.scalars["num_experts"]), int(case.scalars["block_size"])
    L = int(case.scalars["max_loras"])
    ns, nb = int(case.scalars["max_num_tokens_padded"]), int(case.scalars["max_num_m_blocks"])
    s = torch.full((L, ns), ids.numel(), dtype=torch.int32, device=dev)
    ei = torch.full((L, nb), -1, dtype=torch.int32, device=dev)
    npp = torch.zeros(L, dtype=torch.int32, device=dev)
    tok_lora = a["token_lora_mapping"].long().repeat_interleave(k)   # the LoRA of each flat id
    lora_ids, enabled = a["lora_ids"].tolist(), a["adapter_enabled"].tolist()
    for slot in range(L):
        l = lora_ids[slot]
        if l < 0 or not enabled[l]:
            continue
        npp[l] = _align(ids, tok_lora == l, E, bs, s[l], ei[l], -1).to(torch.int32)
    return {"sorted_token_ids": s.reshape(-1), "expert_ids": ei.reshape(-1), "num_tokens_post_pad": npp}


def _batched_moe_align_block_size(case, a):
    n = a["expert_num_tokens"].long()
    dev = n.device
    maxt, bs = int(case.scalars["max_tokens_per_batch"]), int(case.scalars["block_size"])
    Bn = n.shape[0]
    padded = (n + bs - 1) // bs * bs
    start = torch.cumsum(padded, 0) - padded
    first = torch.cumsum(n, 0) - n
    q = torch.repeat_interleave(torch.arange(Bn, device=dev), n)
    i = torch.arange(q.numel(), device=dev) - first.index_select(0, q)
    s = torch.full(case.tensor("sorted_ids").shape, Bn * maxt, dtype=torch.int32, device=dev)
    s[start.index_select(0, q) + i] = (q * maxt + i).to(torch.int32)
    ei = torch.full(case.tensor("expert_ids").shape, -1, dtype=torch.int32, device=dev)
    be = torch.repeat_interleave(torch.arange(Bn, device=dev), padded // bs)
    ei[:be.numel()] = be.to(torch.int32)
    return {"sorted_ids": s, "expert_ids": ei, "num_tokens_post_pad": padded.sum().reshape(1).to(torch.int32)}


# ---- packed-integer formats (GPTQ, AWQ, Marlin): int32 words handled as int64 bit
# patterns in [0, 2^32), so that shifts and masks never meet the sign ----

def _u32(x):
    return x.long() & 0xFFFFFFFF


def _i32(x):
    return torch.where(x >= 2 ** 31, x - 2 ** 32, x).to(torch.int32)


def _fields(w, bits):
    """[..., 32/bits] fields of the words w (int64 bit patterns), lowest first."""
    sh = torch.arange(0, 32, bits, device=w.device)
    return (w.unsqueeze(-1) >> sh) & ((1 << bits) - 1)


def _pack(f, bits):
    """Words of the fields f [..., 32/bits] (lowest first)."""
    sh = torch.arange(0, 32, bits, device=f.device)
    return (f << sh).sum(dim=-1)


def _cp_gather_indexer_k_quant_cache(case, a):
    kc = a["kv_cache"]                                      # [blocks, block, head_dim + scale bytes]
    dev = kc.device
    nblk, bs = kc.shape[0], kc.shape[1]
    flat = kc.reshape(nblk, -1)            # a block: block_size keys of head_dim bytes, then the scales
    hd, sb = case.tensor("dst_k").shape[1], case.tensor("dst_scale").shape[1]
    cu, bt = a["cu_seq_lens"].long(), a["block_table"].long()
    lens = cu[1:] - cu[:-1]
    q = torch.repeat_interleave(torch.arange(lens.shape[0], device=dev), lens)
    t = torch.arange(q.numel(), device=dev) + cu[0]
    p = t - cu.index_select(0, q)
    blk, o = bt[q, p // bs].unsqueeze(1), (p % bs).unsqueeze(1)
    dk = torch.empty(case.tensor("dst_k").shape, dtype=kc.dtype, device=dev)
    ds = torch.empty(case.tensor("dst_scale").shape, dtype=kc.dtype, device=dev)
    dk[t] = flat[blk, o * hd + torch.arange(hd, device=dev)]
    ds[t] = flat[blk, bs * hd + o * sb + torch.arange(sb, device=dev)]
    return {"dst_k": dk, "dst_scale": ds}


def _cutlass_pack_scale_fp8(case, a):
    s = _f(a["scales"]).reshape(-1, 1)
    m = torch.tensor([-8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0], device=s.device)
    return {"out": (s * m).clamp(-_F8_MAX, _F8_MAX).to(torch.float8_e4m3fn).reshape(-1)}


def _gptq_shuffle(case, a):
    w = a["q_weight"]                                       # [K * bit / 32, N]
    bits = int(case.scalars["bit"])
    per = 32 // bits
    P, N = w.shape
    u = _u32(w)
    if a["q_perm"].numel():
        f = _fields(u, bits).permute(0, 2, 1).reshape(P * per, N)   # logical rows [K, N]
        f = f.index_select(0, a["q_perm"].long())
        u = _pack(f.reshape(P, per, N).permute(0, 2, 1), bits)
    if bits == 4:                     # nibbles q0..q7 -> q0 q2 q4 q6 q1 q3 q5 q7
        f = _fields(u, 4)
        u = _pack(f[..., [0, 2, 4, 6, 1, 3, 5, 7]], 4)
    w.copy_(_i32(u))
    return {"q_weight": w}


def _marlin_int4_fp8_preprocess(case, a):
    w = a["qweight"]
    f = _fields(_u32(w), 4)
    if "qzeros" in a:
        zw = _u32(a["qzeros"])
        z = _fields(zw, 4).repeat_interleave(w.shape[0] // zw.shape[0], dim=0)
    else:
        z = torch.full_like(f, 8)
    o = _i32(_pack(torch.where(f >= z, f - z, 15 - f), 4))
    if int(case.scalars["inplace"]):
        w.copy_(o)
        return {"qweight": w}
    return {"out": o}


_marlin_idx = {}


def _marlin_order(K, N, bits, a8, dev):
    """(k, n) [words, 32/bits] of the logical weight that each slot of each Marlin word
    holds (the words of one expert in memory order, slots lowest first): tiles of 16 x 64
    (32 x 32 with 8-bit activations) in row-major tile order; in a tile, thread t of warp
    w takes the 8 values of its tensor-core fragment (rows 2(t%4) + {0, 1, 8, 9}, columns
    16w + t/4 and 8 further; or with 8-bit activations rows 4(t%4) + {0..3} and 16 further,
    column 16(w/2) + t/4 + 8(w%2)) and packs them interleaved."""
    key = (K, N, bits, a8, str(dev))
    if key in _marlin_idx:
        return _marlin_idx[key]
    TK, TN = (32, 32) if a8 else (16, 64)
    ar = lambda n: torch.arange(n, device=dev)              # noqa: E731
    kt = ar(K // TK).view(-1, 1, 1, 1, 1)
    nt = ar(N // TN).view(1, -1, 1, 1, 1)
    t = ar(32).view(1, 1, -1, 1, 1)                         # word order in a tile: thread, then warp
    w = ar(4).view(1, 1, 1, -1, 1)
    i = ar(4).view(1, 1, 1, 1, -1)
    col = t // 4
    if a8:
        k0 = kt * TK + (t % 4) * 4 + i
        kk = torch.cat((k0, k0 + 16), dim=-1)
        n0 = nt * TN + (w // 2) * 16 + col + 8 * (w % 2) + 0 * i
        nn = torch.cat((n0, n0), dim=-1)
    else:
        off = torch.tensor([0, 1, 8, 9], device=dev).view(1, 1, 1, 1, -1)
        k0 = kt * TK + (t % 4) * 2 + off
        kk = torch.cat((k0, k0), dim=-1)
        n0 = nt * TN + w * 16 + col + 0 * off
        nn = torch.cat((n0, n0 + 8), dim=-1)
    shp = (K // TK, N // TN, 32, 4, 8)
    kk, nn = kk.expand(shp), nn.expand(shp)                  # fragment value v = 0..7
    if bits == 4:
        sel = [0, 4, 1, 5, 2, 6, 3, 7] if a8 else [0, 2, 4, 6, 1, 3, 5, 7]
        kk, nn = kk[..., sel].reshape(-1, 8), nn[..., sel].reshape(-1, 8)
    else:                             # two words per thread and warp: values 0-3, then 4-7
        sel = [0, 1, 2, 3] if a8 else [0, 2, 1, 3]
        sel = sel + [4 + s for s in sel]
        kk, nn = kk[..., sel].reshape(-1, 4), nn[..., sel].reshape(-1, 4)
    _marlin_idx[key] = (kk, nn)
    return kk, nn


def _marlin_moe_repack(case, a):
    w = _u32(a["b_q_weight"])
    E = w.shape[0]
    K, N = int(case.scalars["size_k"]), int(case.scalars["size_n"])
    bits, a8 = int(case.scalars["num_bits"]), bool(int(case.scalars["is_a_8bit"]))
    pf = 32 // bits
    f = _fields(w, bits)
    if case.op.name == "awq_marlin_moe_repack":             # [E, K, N/pf] packed along N, interleaved
        order = [0, 4, 1, 5, 2, 6, 3, 7] if bits == 4 else [0, 2, 1, 3]
        q = f[..., order].reshape(E, K, N)
    else:                                                   # [E, K/pf, N] packed along K
        q = f.permute(0, 1, 3, 2).reshape(E, K, N)
        perm = a["perm"]
        if perm.shape[1]:
            q = q.gather(1, perm.long().unsqueeze(2).expand(E, K, N))
    kk, nn = _marlin_order(K, N, bits, a8, w.device)
    out = _pack(q[:, kk, nn], bits)                         # [E, words]
    return {"out": _i32(out).reshape(case.tensor("out").shape)}


# ---- attention and state-space scan ----

_PARTITION = 512     # paged_attention_v2's partition of a sequence


def _paged_cache(c, scale, fp8):
    return _f(c.view(torch.float8_e4m3fn)) * _f(scale) if fp8 else _f(c)


def _paged_attention(case, a):
    """paged_attention_v1/v2 as vLLM's test reference computes it (ref_single_query_cached_kv_attention):
    per sequence, its keys and values gathered through the block table, the softmax of the
    scaled logits (plus the ALiBi bias) in f32 and the weighted sum of the values. v2 also
    keeps each partition's max logit, exp sum and normalised output."""
    q = a["query"]
    S, H, D = q.shape
    kc, vc = a["key_cache"], a["value_cache"]               # [blocks, KH, D/x, BS, x], [blocks, KH, D, BS]
    KH, BS = kc.shape[1], kc.shape[3]
    fp8 = kc.dtype == torch.uint8
    scale, alibi = float(case.scalars["scale"]), int(case.scalars["use_alibi"])
    v2 = "tmp_out" in a
    out = torch.empty_like(q)
    lens, bt = a["seq_lens"].tolist(), a["block_tables"].long()
    dev = q.device
    for s in range(S):
        n = lens[s]
        blocks = bt[s, :(n + BS - 1) // BS]
        k = _paged_cache(kc.index_select(0, blocks), a["k_scale"], fp8)     # [nb, KH, D/x, BS, x]
        k = k.permute(1, 0, 3, 2, 4).reshape(KH, -1, D)[:, :n]              # [KH, n, D]
        v = _paged_cache(vc.index_select(0, blocks), a["v_scale"], fp8)     # [nb, KH, D, BS]
        v = v.permute(1, 0, 3, 2).reshape(KH, -1, D)[:, :n]
        k = k.repeat_interleave(H // KH, dim=0)
        v = v.repeat_interleave(H // KH, dim=0)
        logit = scale * torch.bmm(k, _f(q[s]).unsqueeze(2)).squeeze(2)      # [H, n]
        if alibi:
            pos = torch.arange(n, device=dev, dtype=torch.float32) - (n - 1)
            logit = logit + _f(a["alibi_slopes"]).unsqueeze(1) * pos
        p = torch.softmax(logit, dim=-1)
        out[s] = torch.bmm(p.unsqueeze(1), v).squeeze(1).to(q.dtype)
        if v2:
            P = (n + _PARTITION - 1) // _PARTITION
            lp = torch.full((H, P * _PARTITION), float("-inf"), device=dev)
            lp[:, :n] = logit
            lp = lp.view(H, P, _PARTITION)
            mx = lp.amax(dim=-1)
            e = torch.exp(lp - mx.unsqueeze(-1))
            sm = e.sum(dim=-1)
            vp = torch.zeros((H, P * _PARTITION, D), device=dev)
            vp[:, :n] = v
            po = torch.bmm((e / sm.unsqueeze(-1)).view(H * P, 1, _PARTITION), vp.view(H * P, _PARTITION, D))
            a["exp_sums"][s, :, :P] = sm
            a["max_logits"][s, :, :P] = mx
            a["tmp_out"][s, :, :P] = po.view(H, P, D).to(a["tmp_out"].dtype)
    res = {"out": out}
    if v2:
        res.update(exp_sums=a["exp_sums"], max_logits=a["max_logits"], tmp_out=a["tmp_out"])
    return res


def _selective_scan_fwd(case, a):
    """Mamba's selective scan as vLLM's test reference (selective_scan_ref) runs it: the
    recurrence over time steps, vectorised over batch, channels and states, in f32."""
    u, delta, z = a["u"], a["delta"], a["z"]
    Bn, Dm, L = u.shape
    G, N = a["B"].shape[1], a["B"].shape[2]
    A, Dv = _f(a["A"]), _f(a["D"])
    dt = _f(delta) + _f(a["delta_bias"]).view(1, -1, 1)
    if int(case.scalars["delta_softplus"]):
        dt = torch.where(dt <= 20, torch.log1p(torch.exp(dt)), dt)
    Bm = _f(a["B"]).repeat_interleave(Dm // G, dim=1)      # [B, D, N, L]
    Cm = _f(a["C"]).repeat_interleave(Dm // G, dim=1)
    uf = _f(u)
    st = a["ssm_states"]
    x = torch.where(a["has_initial_state"].view(-1, 1, 1), st, torch.zeros_like(st))
    dA = torch.exp(dt.unsqueeze(2) * A.view(1, Dm, N, 1))  # [B, D, N, L]
    dBu = (dt * uf).unsqueeze(2) * Bm
    ys = []
    for t in range(L):
        x = dA[..., t] * x + dBu[..., t]
        ys.append((x * Cm[..., t]).sum(dim=-1))
    y = torch.stack(ys, dim=-1) + Dv.view(1, -1, 1) * uf
    zf = _f(z)
    z.copy_((y * zf * torch.sigmoid(zf)).to(z.dtype))
    delta.copy_(y.to(delta.dtype))
    st.copy_(x)
    return {"delta": delta, "z": z, "ssm_states": st}


def _cvs_row(vi, si, q, kv, m, M, N, causal):
    """One row block of convert_vertical_slash_indexes: (block starts, columns). The
    merge of the ascending vertical list and the descending slash list that one thread of
    vLLM's kernel runs: each slash (offset from the diagonal) is a band of M columns
    ending at shift + end - offset; bands that come within one block extend the current
    range by M, farther ones close it (its N-column blocks are saved, clipped to kv);
    verticals before the current range become single columns."""
    nv, ns = len(vi), len(si)
    start, end = m * M, m * M + M
    shift = kv - q if causal else kv
    blocks, cols = [], []

    def save(lo, hi):
        if lo < kv:
            blocks.extend(range(lo, min(hi, kv), N))

    nxt_v, nxt_s = 1, 1
    vcur, scur = vi[0], si[0]
    while scur >= end + shift and nxt_s < ns:     # slashes right of this row block
        scur = si[nxt_s]
        nxt_s += 1
    have_slash = scur <= end + shift
    scur = max(shift + end - scur, M)
    lo, hi = scur - M, scur
    if not have_slash:
        lo = shift + end if causal else kv
        hi = lo + N
    done = False
    while True:
        if vcur < hi:
            if vcur < lo:
                cols.append(vcur)
            if nxt_v < nv:
                vcur = vi[nxt_v]
                nxt_v += 1
            else:
                vcur = end + N + shift
            continue
        if nxt_s < ns and (causal or si[nxt_s] >= start):
            scur = max(shift + end - si[nxt_s], M)
            nxt_s += 1
        elif nxt_v == nv or (vcur > lo and causal):
            if nxt_v == nv and not causal and vcur < kv:
                cols.append(vcur)
            save(lo, hi)
            break
        else:
            if not causal:
                save(lo, hi)
            lo = shift + end if causal else kv
            hi = lo + N
            done = True
        if not done:
            if scur > hi + M:
                save(lo, hi)
                lo, hi = scur - M, scur
            elif scur > hi:
                hi += M
    return blocks, cols


def _convert_vertical_slash_indexes(case, a):
    """MInference's index conversion: every (batch, head, row block) runs the sequential
    merge of _cvs_row (one thread per row block in vLLM's kernel too) on the CPU; the
    lists are written into the INOUT outputs on their device."""
    bc, bo, cc, ci = a["block_count"], a["block_offset"], a["column_count"], a["column_index"]
    Bn, H, rows = bc.shape
    M, N = int(case.scalars["block_size_M"]), int(case.scalars["block_size_N"])
    causal = bool(int(case.scalars["causal"]))
    vis, sis = a["vertical_indexes"].tolist(), a["slash_indexes"].tolist()
    qs, kvs = a["q_seqlens"].tolist(), a["kv_seqlens"].tolist()
    bc_h, bo_h, cc_h, ci_h = (t.cpu().clone() for t in (bc, bo, cc, ci))
    for b in range(Bn):
        for h in range(H):
            for m in range(rows):
                if m * M >= qs[b]:
                    continue                    # rows past the query stay as they were
                blocks, cols = _cvs_row(vis[b][h], sis[b][h], qs[b], kvs[b], m, M, N, causal)
                if len(blocks) > bo_h.shape[3] or len(cols) > ci_h.shape[3]:
                    raise RuntimeError("row block (%d, %d, %d) overflows its output row" % (b, h, m))
                bc_h[b, h, m], cc_h[b, h, m] = len(blocks), len(cols)
                bo_h[b, h, m, :len(blocks)] = torch.tensor(blocks, dtype=torch.int32)
                ci_h[b, h, m, :len(cols)] = torch.tensor(cols, dtype=torch.int32)
    for t, hst in ((bc, bc_h), (bo, bo_h), (cc, cc_h), (ci, ci_h)):
        t.copy_(hst)
    return {"block_count": bc, "block_offset": bo, "column_count": cc, "column_index": ci}


COMPOSITES = {
    "rms_norm": _rms_norm,
    "fused_add_rms_norm": _fused_add_rms_norm,
    "moe_sum": _moe_sum,
    "shuffle_rows": _shuffle_rows,
    "permute_cols": _permute_cols,
    "swap_blocks": _swap_blocks,
    "copy_blocks": _copy_blocks,
    "copy_blocks_mla": _copy_blocks,
    "merge_attn_states": _merge_attn_states,
    "apply_repetition_penalties_cuda": _apply_repetition_penalties,
    "hadacore_transform": _hadacore_transform,
    "topk_softmax": _topk_softmax,
    "rotary_embedding": _rotary_embedding,
    "reshape_and_cache": _reshape_and_cache,
    "reshape_and_cache_flash": _reshape_and_cache_flash,
    "concat_and_cache_mla": _concat_and_cache_mla,
    "scaled_int8_quant": _scaled_int8_quant,
    "scaled_fp8_quant": _scaled_fp8_quant,
    "convert_fp8": _convert_fp8,
    "rms_norm_dynamic_per_token_quant": _rms_norm_quant,
    "rms_norm_per_block_quant": _rms_norm_quant,
    "cutlass_scaled_mm": _scaled_mm,
    "cutlass_scaled_mm_azp": _scaled_mm,
    "cp_gather_cache": _cp_gather_cache,
    "gather_and_maybe_dequant_cache": _gather_and_maybe_dequant_cache,
    "fused_qk_norm_rope": _fused_qk_norm_rope,
    "grouped_topk": _grouped_topk,
    "moe_align_block_size": _moe_align_block_size,
    "moe_lora_align_block_size": _moe_lora_align_block_size,
    "batched_moe_align_block_size": _batched_moe_align_block_size,
    "cp_gather_indexer_k_quant_cache": _cp_gather_indexer_k_quant_cache,
    "cutlass_pack_scale_fp8": _cutlass_pack_scale_fp8,
    "gptq_shuffle": _gptq_shuffle,
    "marlin_int4_fp8_preprocess": _marlin_int4_fp8_preprocess,
    "gptq_marlin_moe_repack": _marlin_moe_repack,
    "awq_marlin_moe_repack": _marlin_moe_repack,
    "paged_attention_v1": _paged_attention,
    "paged_attention_v2": _paged_attention,
    "selective_scan_fwd": _selective_scan_fwd,
    "convert_vertical_slash_indexes": _convert_vertical_slash_indexes,
}


# ---- vLLM's own kernels (only where `import vllm` works) ----

def _v_rms_norm(case, a):
    x = a["input"]
    out = torch.empty_like(x)
    torch.ops._C.rms_norm(out, x, a["weight"], float(case.scalars["epsilon"]))
    return {"out": out}


def _v_fused_add_rms_norm(case, a):
    torch.ops._C.fused_add_rms_norm(a["input"], a["residual"], a["weight"], float(case.scalars["epsilon"]))
    return {"input": a["input"], "residual": a["residual"]}


def _v_moe_sum(case, a):
    x = a["input"]
    out = torch.empty((x.shape[0], x.shape[2]), dtype=x.dtype, device=x.device)
    torch.ops._moe_C.moe_sum(x, out)
    return {"output": out}


VLLM = {
    "rms_norm": _v_rms_norm,
    "fused_add_rms_norm": _v_fused_add_rms_norm,
    "moe_sum": _v_moe_sum,
}

_vllm_version = False


def vllm_version():
    """vLLM's version when it imports (its custom ops loaded), else None."""
    global _vllm_version
    if _vllm_version is False:
        try:
            import vllm
            import vllm._custom_ops  # noqa: F401  (registers torch.ops._C and friends)
            _vllm_version = getattr(vllm, "__version__", "unknown")
        except Exception:
            _vllm_version = None
    return _vllm_version


def find(op_name):
    """(fn, label) for op_name, or (None, reason)."""
    v = vllm_version()
    if v is not None and op_name in VLLM:
        return VLLM[op_name], "vllm " + v
    if op_name in COMPOSITES:
        return COMPOSITES[op_name], "composite (torch %s)" % torch.__version__.split("+")[0]
    return None, ("no PyTorch composite for vLLM operator %s%s (docs/native.md lists the uncovered ones)"
                  % (op_name, "" if v is None else ", and no adapter to vLLM %s's kernel" % v))

from .vllm_quant import COMPOSITES as _QUANT_COMPOSITES  # noqa: E402  (quantised GEMMs, GGML)
COMPOSITES.update(_QUANT_COMPOSITES)
