"""PyTorch composites for kgb's vLLM weight-quantised GEMMs and GGML (GGUF) operators.

Each composite unpacks the operator's storage format with integer shifts and masks
(docs/formats-gptq-awq-marlin.md, docs/formats-ggml.md), forms the weights as the
kernel does (fp16 products where vLLM's kernels round them), and multiplies in f32, as
vLLM's own test references dequantise and then call matmul. The GGML products first
quantise the activations to q8_1 per block of 32, as vLLM's gguf kernels do, so that
they compute the kernels' numbers rather than the unquantised product.

Layouts that depend only on the shapes (the gather indices of Marlin's tile order,
Marlin 2:4's code and metadata order, AllSpark's N32K16 order) are built once per
shape and device with torch arithmetic and kept in _LAYOUTS; the data-dependent work
runs on the case's device. COMPOSITES is merged into vllm_ops.COMPOSITES."""
import torch

_LAYOUTS = {}


def _layout(key, build):
    v = _LAYOUTS.get(key)
    if v is None:
        v = _LAYOUTS[key] = build()
    return v


def _ar(n, dev):
    return torch.arange(n, device=dev, dtype=torch.int64)


def _f16w(v):
    """A weight formed in fp16 by the kernel (one rounding), back in f32 for the matmul."""
    return v.to(torch.float16).float()


def _fields(words, shifts, mask):
    """words [...] int32 -> [..., len(shifts)] of (word >> shift) & mask (as int64)."""
    return (words.long().unsqueeze(-1) >> shifts) & mask


# ---------------------------------------------------------------------------
# awq_gemm
# ---------------------------------------------------------------------------

_AWQ_ORDER = (0, 4, 1, 5, 2, 6, 3, 7)     # nibble of logical column i of a word


def _awq_unpack(packed):
    """[R, N/8] int32 in AWQ's interleaved order -> [R, N] int64 codes."""
    sh = torch.tensor(_AWQ_ORDER, device=packed.device, dtype=torch.int64) * 4
    r = packed.shape[0]
    return _fields(packed, sh, 0xF).reshape(r, -1)


def _awq_gemm(case, a):
    x, s = a["input"], a["scales"]
    K = x.shape[1]
    G = K // s.shape[0]
    q = _awq_unpack(a["qweight"])                                  # [K, N]
    z = _awq_unpack(a["qzeros"]).repeat_interleave(G, dim=0)       # [K, N]
    w = _f16w((q - z).float() * s.float().repeat_interleave(G, dim=0))
    return {"out": (x.float() @ w).to(torch.float16)}


# ---------------------------------------------------------------------------
# gptq_gemm
# ---------------------------------------------------------------------------

def _gptq_gemm(case, a):
    x, qw, qz, s, gi = a["a"], a["b_q_weight"], a["b_gptq_qzeros"], a["b_gptq_scales"], a["b_g_idx"]
    dev = x.device
    bits = int(case.scalars["bit"])
    pf, mask = 32 // bits, (1 << bits) - 1
    K, N = x.shape[1], qw.shape[1]
    G = K // s.shape[0]
    pos = list(range(pf))
    if int(case.scalars["use_exllama"]) and bits == 4:
        # gptq_shuffle's order: rows 0 2 4 6 in nibbles 0..3, rows 1 3 5 7 in 4..7
        pos = [j // 2 if j % 2 == 0 else 4 + j // 2 for j in range(pf)]
    sh = torch.tensor(pos, device=dev, dtype=torch.int64) * bits
    q = _fields(qw, sh, mask).permute(0, 2, 1).reshape(K, N)       # row p*pf + j from nibble pos[j]
    z = _fields(qz, _ar(pf, dev) * bits, mask).reshape(qz.shape[0], N)
    if not int(case.scalars["use_v2_format"]):
        z = z + 1
    g = gi.long() if gi.numel() else _ar(K, dev) // G
    w = _f16w((q - z.index_select(0, g)).float() * s.float().index_select(0, g))
    return {"out": (x.float() @ w).to(torch.float16)}


# ---------------------------------------------------------------------------
# gptq_marlin_gemm: Marlin's tile order (16 x 64 tiles, 16-bit activations)
# ---------------------------------------------------------------------------

def _marlin_index(K, N, bits, dev):
    """(word index, shift) [K, N] of logical weight (k, n) in Marlin's tile layout of a
    K x N weight: tile (kt, nt) of 16 x 64 at (kt * N/64 + nt) * 1024/pf words; warp w,
    thread t gathers rows r, r+1, r+8, r+9 (r = 2 (t % 4)) of column 16 w + t / 4 (v0..v3)
    and of that column + 8 (v4..v7)."""
    pf = 32 // bits
    kt, nt = K // 16, N // 64
    tile = 16 * 64 // pf
    w = _ar(4, dev).view(4, 1, 1)
    t = _ar(32, dev).view(1, 32, 1)
    i = _ar(8, dev).view(1, 1, 8)
    tc_off = torch.tensor((0, 1, 8, 9), device=dev, dtype=torch.int64)
    row = (t % 4) * 2 + tc_off[i % 4]                             # [1, 32, 8]
    col = w * 16 + t // 4 + 8 * (i // 4)                          # [4, 32, 8]
    row, col = torch.broadcast_tensors(row, col)
    if bits == 4:
        # nibble of v[i]: the inverse of {0,2,4,6,1,3,5,7}
        slot = torch.tensor((0, 4, 1, 5, 2, 6, 3, 7), device=dev, dtype=torch.int64)[i]
        word = t * 4 + w + 0 * i
    else:
        # v0..v3 in word t*8 + 2w, v4..v7 in the next; byte of v[i % 4]: {0,2,1,3}
        slot = torch.tensor((0, 2, 1, 3), device=dev, dtype=torch.int64)[i % 4]
        word = t * 8 + 2 * w + i // 4
    word, slot = torch.broadcast_tensors(word, slot)
    widx = torch.empty((K, N), device=dev, dtype=torch.int64)
    shift = torch.empty((K, N), device=dev, dtype=torch.int64)
    tk = _ar(kt, dev).view(-1, 1, 1, 1, 1)
    tn = _ar(nt, dev).view(1, -1, 1, 1, 1)
    kk = (tk * 16 + row).expand(kt, nt, 4, 32, 8).reshape(-1)
    nn = (tn * 64 + col).expand(kt, nt, 4, 32, 8).reshape(-1)
    ww = ((tk * nt + tn) * tile + word).expand(kt, nt, 4, 32, 8).reshape(-1)
    ss = (slot * bits).expand(kt, nt, 4, 32, 8).reshape(-1)
    widx[kk, nn] = ww
    shift[kk, nn] = ss
    return widx, shift


def _marlin_scale_inv(grouped, dev):
    """Index j' such that logical[r*w + j] = stored[r*w + inv[j]] for Marlin's scale rows
    (grouped: width 64, stored j holds column (j % 8) * 8 + j / 8; per channel: width
    32, stored 8i + j holds 2i + {0,1,8,9,16,17,24,25}[j])."""
    if grouped:
        perm = [i + 8 * j for i in range(8) for j in range(8)]
    else:
        perm = [2 * i + o for i in range(4) for o in (0, 1, 8, 9, 16, 17, 24, 25)]
    return torch.tensor(perm, device=dev, dtype=torch.int64).argsort()


def _gptq_marlin_gemm(case, a):
    x, qw, s = a["a"], a["b_q_weight"], a["b_scales"]
    dev = x.device
    bits = int(case.scalars["num_bits"])
    K, N = x.shape[1], s.shape[1]
    G = K // s.shape[0]
    widx, shift = _layout(("marlin", K, N, bits, str(dev)), lambda: _marlin_index(K, N, bits, dev))
    grouped = G < K
    width = 64 if grouped else 32
    inv = _layout(("marlin_s", grouped, str(dev)), lambda: _marlin_scale_inv(grouped, dev))
    sl = s.reshape(-1, width).index_select(1, inv).reshape(s.shape)   # logical scale order
    q = (qw.reshape(-1).long()[widx] >> shift) & ((1 << bits) - 1)
    bias = 1 << (bits - 1)
    w = _f16w((q - bias).float() * sl.float().repeat_interleave(G, dim=0))
    return {"out": (x.float() @ w).to(torch.float16), "workspace": a["workspace"]}


# ---------------------------------------------------------------------------
# gptq_marlin_24_gemm: 2:4 sparse Marlin
# ---------------------------------------------------------------------------

def _m24_perm(bits):
    """Stored position x of a run of 1024 codes holds the code at run position perm[x]."""
    base = []
    for i in range(32):
        tile, half, r = i // 8, (i // 4) % 2, 2 * (i % 4)
        one = [16 * (r + dr) + 256 * tile + 8 * half + 4 * blk for blk in (0, 1) for dr in (0, 1, 8, 9)]
        base += [o + j for j in range(4) for o in one]
    il, w = ((0, 2, 4, 6, 1, 3, 5, 7), 8) if bits == 4 else ((0, 2, 1, 3), 4)
    return [base[(x // w) * w + il[x % w]] for x in range(1024)]


def _m24_layout(K, N, bits, dev):
    """(codes, meta): codes[kc_local * N + n] = stored position, within its tile row of
    16 compressed rows, of compressed code (kc, n); meta [K/16, N] = flat index in b_meta
    of column n's metadata element c (the nibbles of groups 4c .. 4c+3)."""
    row = 16 * N
    perm = torch.tensor(_m24_perm(bits), device=dev, dtype=torch.int64)
    x = _ar(row, dev)
    o = (x // 1024) * 1024 + perm[x % 1024]
    dest = ((o % 256) // 16) * N + (o // 256) * 16 + o % 16
    codes = torch.empty(row, device=dev, dtype=torch.int64)
    codes[dest] = x
    n = _ar(N, dev).view(1, -1)
    c = _ar(K // 16, dev).view(-1, 1)
    r = (n // 64) * 64 + (n % 2) * 2 + (n % 8) // 4 + ((n % 4) // 2) * 32 + ((n % 64) // 8) * 4
    r, c = torch.broadcast_tensors(r, c)
    up = (r % 2 == 0) & (c % 2 == 1)          # the off-diagonal entries of each 2 x 2 block swap
    down = (r % 2 == 1) & (c % 2 == 0)
    r2 = torch.where(up, r + 1, torch.where(down, r - 1, r))
    c2 = torch.where(up, c - 1, torch.where(down, c + 1, c))
    meta = (c2 // 2) * (2 * N) + r2 * 2 + c2 % 2
    return codes, meta


def _m24_sperm_inv(dev):
    o = (0, 4, 1, 5, 2, 6, 3, 7)
    perm = [(j // 8) * 8 + o[j % 8] for j in range(64)]
    return torch.tensor(perm, device=dev, dtype=torch.int64).argsort()


def _gptq_marlin_24_gemm(case, a):
    x, qw, mt, s = a["a"], a["b_q_weight"], a["b_meta"], a["b_scales"]
    dev = x.device
    bits = int(case.scalars["num_bits"])
    pf, mask, bias = 32 // bits, (1 << bits) - 1, 1 << (bits - 1)
    K, N = x.shape[1], s.shape[1]
    codes, meta = _layout(("m24", K, N, bits, str(dev)), lambda: _m24_layout(K, N, bits, dev))
    # every word's codes, first in the lowest bits: [K/32, 16 N] in stored order
    st = _fields(qw, _ar(pf, dev) * bits, mask).reshape(K // 32, 16 * N)
    comp = (st.index_select(1, codes).reshape(K // 2, N) - bias).float()    # [K/2, N]
    m16 = mt.reshape(-1).long()[meta] & 0xFFFF                              # [K/16, N]
    nib = _fields(m16.transpose(0, 1), _ar(4, dev) * 4, 0xF)                # [N, K/16, 4]
    nib = nib.reshape(N, K // 4).transpose(0, 1)                            # [K/4, N], group g
    i0, i1 = (nib & 3).unsqueeze(1), (nib >> 2).unsqueeze(1)
    sel = _ar(4, dev).view(1, 4, 1)
    c0, c1 = comp[0::2].unsqueeze(1), comp[1::2].unsqueeze(1)               # [K/4, 1, N]
    w = (torch.where(sel == i0, c0, 0.0) + torch.where(sel == i1, c1, 0.0)).reshape(K, N)
    groups = s.shape[0]
    if groups > 1:
        inv = _layout(("m24_s", str(dev)), lambda: _m24_sperm_inv(dev))
        sl = s.reshape(-1, 64).index_select(1, inv).reshape(s.shape)
        w = _f16w(w * sl.float().repeat_interleave(K // groups, dim=0))
        out = x.float() @ w
    else:
        out = (x.float() @ w) * s.float()
    return {"out": out.to(torch.float16), "workspace": a["workspace"]}


# ---------------------------------------------------------------------------
# allspark_w8a16_gemm: AllSpark's N32K16 order
# ---------------------------------------------------------------------------

def _allspark_layout(K, N, dev):
    k = _ar(K, dev).view(-1, 1)
    n = _ar(N, dev).view(1, -1)
    row = (n // 32) * 8 + n % 8
    col = (k // 16) * 64 + ((k % 8) // 2) * 16 + ((n % 32) // 16) * 8 + ((n % 16) // 8) * 4 + \
        ((k % 16) // 8) * 2 + k % 2
    widx = row * (4 * K) + col                                              # [K, N]
    sidx = (n // 32) * 32 + (n % 8) * 4 + (n % 32) // 8                     # [1, N]
    return widx, sidx.view(-1)


def _allspark_w8a16_gemm(case, a):
    x, qw, s = a["a"], a["b_qweight"], a["b_scales"]
    dt = x.dtype
    K, N = x.shape[1], int(case.scalars["n"])
    widx, sidx = _layout(("allspark", K, N, str(x.device)), lambda: _allspark_layout(K, N, x.device))
    q = qw.reshape(-1)[widx].float() - 128.0                                # [K, N]
    if int(case.scalars["has_zp"]):
        q = (q - a["b_qzeros"].reshape(-1)[sidx].float()).to(dt).float()
    w = (q * s.reshape(-1)[sidx].float()).to(dt).float()
    return {"out": (x.float() @ w).to(dt)}


# ---------------------------------------------------------------------------
# GGML / GGUF legacy block types
# ---------------------------------------------------------------------------

# type id -> (block bytes, has min, bits); docs/formats-ggml.md
_GGML = {2: (18, False, 4), 3: (20, True, 4), 6: (22, False, 5), 7: (24, True, 5), 8: (34, False, 8)}


def _half(b):
    """[..., 2] uint8 (little-endian) -> [...] f32."""
    v = b[..., 0].to(torch.int32) | (b[..., 1].to(torch.int32) << 8)
    v = torch.where(v >= 0x8000, v - 0x10000, v)                   # the int16 of the same bits
    return v.to(torch.int16).view(torch.float16).float()


def _ggml_blocks(W, tid):
    """Raw GGUF bytes [..., nb * bytes] -> (q [..., nb, 32] raw quants as f32, d, m
    [..., nb] f32; m None without a min)."""
    nbytes, has_min, bits = _GGML[tid]
    W = W.contiguous()
    b = W.view(*W.shape[:-1], W.shape[-1] // nbytes, nbytes)
    d = _half(b[..., 0:2])
    m = _half(b[..., 2:4]) if has_min else None
    o = 4 if has_min else 2
    if bits == 8:
        q = b[..., o:o + 32].view(torch.int8).float()
        return q, d, m
    if bits == 5:
        hb = b[..., o:o + 4].long()
        qh = hb[..., 0] | hb[..., 1] << 8 | hb[..., 2] << 16 | hb[..., 3] << 24
        o += 4
    qs = b[..., o:o + 16].long()
    q = torch.cat((qs & 0xF, qs >> 4), dim=-1)                     # elements 0..15, 16..31
    if bits == 5:
        q = q | (((qh.unsqueeze(-1) >> _ar(32, W.device)) & 1) << 4)
    return q.float(), d, m


def _ggml_offset(tid):
    return {2: 8.0, 6: 16.0}.get(tid, 0.0)


def _ggml_dequantize(case, a):
    tid = int(case.scalars["type"])
    q, d, m = _ggml_blocks(a["W"], tid)
    if m is not None:
        v = d.unsqueeze(-1) * q + m.unsqueeze(-1)
    else:
        v = d.unsqueeze(-1) * (q - _ggml_offset(tid))
    import kgb
    out = v.reshape(q.shape[0], -1)
    return {"out": out.to(kgb.torch_dtype(case.tensor("out").dtype))}


def _q8_1(X):
    """X [B, K] -> (q8 [B, nb, 32] f32, d8 [B, nb], s8 [B, nb]): per block of 32,
    d8 = max|x| / 127 in f32, q8 = roundf(x / d8) (ties away from zero), 0 for an
    all-zero block; d8 and the block's sum of x kept as fp16."""
    x = X.float().reshape(X.shape[0], -1, 32)
    amax = x.abs().amax(dim=-1, keepdim=True)
    d = amax / 127.0
    v = x / torch.where(amax == 0, torch.ones_like(d), d)
    r = torch.round(v)                                              # half to even ...
    t = torch.trunc(v)
    r = torch.where((v - t).abs() == 0.5, t + torch.sign(v), r)    # ... ties away from zero
    q = torch.where(amax == 0, torch.zeros_like(r), r)
    d16 = d.squeeze(-1).to(torch.float16).float()
    s16 = x.sum(dim=-1).to(torch.float16).float()
    return q, d16, s16


def _ggml_products(W, X, tid):
    """[..., R, B] ... the q8_1 products of every weight row of W [..., R, bytes] with
    every row of X [B, K]: returns [..., B, R] f32."""
    q, d, m = _ggml_blocks(W, tid)                                  # [..., R, nb, 32], [..., R, nb]
    q8, d8, s8 = _q8_1(X)                                           # [B, nb, 32], [B, nb]
    wq = (q * d.unsqueeze(-1)).flatten(-2)                          # [..., R, K]
    xq = (q8 * d8.unsqueeze(-1)).flatten(-2)                        # [B, K]
    out = torch.matmul(xq, wq.transpose(-1, -2))                    # [..., B, R]
    if m is not None:
        out = out + torch.matmul(s8, m.transpose(-1, -2))
    elif tid != 8:
        out = out - _ggml_offset(tid) * torch.matmul(s8, d.transpose(-1, -2))
    return out


def _ggml_mul_mat(case, a):
    X = a["X"]
    return {"out": _ggml_products(a["W"], X, int(case.scalars["type"])).to(X.dtype)}


def _ggml_moe_all(case, a):
    """Every token against every expert: [tokens, experts, rows] f32."""
    return _ggml_products(a["W"], a["X"], int(case.scalars["type"])).transpose(0, 1)


def _ggml_moe_a8_vec(case, a):
    X, ids = a["X"], a["topk_ids"].long()
    full = _ggml_moe_all(case, a)                                   # [T, E, R]
    T, top = ids.shape
    sel = full.gather(1, ids.unsqueeze(-1).expand(T, top, full.shape[2]))
    return {"out": sel.reshape(T * top, -1).to(X.dtype)}


def _ggml_moe_a8(case, a):
    X = a["X"]
    dev = X.device
    full = _ggml_moe_all(case, a)                                   # [T, E, R]
    T, E, R = full.shape
    top = int(case.scalars["top_k"])
    bs = int(case.symbols["block_size"])
    st = a["sorted_token_ids"].long()
    eid = a["expert_ids"].long().repeat_interleave(bs)[:st.shape[0]]
    npp = a["num_tokens_post_padded"].long().reshape(-1)[:1]
    valid = (_ar(st.shape[0], dev) < npp) & (st >= 0) & (st < T * top) & (eid >= 0) & (eid < E)
    f = torch.where(valid, st, T * top)                             # invalid entries: a spare row
    rows = full[torch.where(valid, st // top, 0), torch.where(valid, eid, 0)]
    out = torch.zeros((T * top + 1, R), device=dev, dtype=torch.float32)
    out[f] = rows
    return {"out": out[:T * top].to(X.dtype)}


COMPOSITES = {
    "awq_gemm": _awq_gemm,
    "gptq_gemm": _gptq_gemm,
    "gptq_marlin_gemm": _gptq_marlin_gemm,
    "gptq_marlin_24_gemm": _gptq_marlin_24_gemm,
    "allspark_w8a16_gemm": _allspark_w8a16_gemm,
    "ggml_dequantize": _ggml_dequantize,
    "ggml_mul_mat_vec_a8": _ggml_mul_mat,
    "ggml_mul_mat_a8": _ggml_mul_mat,
    "ggml_moe_a8_vec": _ggml_moe_a8_vec,
    "ggml_moe_a8": _ggml_moe_a8,
}
