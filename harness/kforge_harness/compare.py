"""Element-wise comparison statistics, computed in the trusted reference process.

The verdict (pass/fail) is kforge's: this only measures. Every element is
checked, in float64, in chunks so huge outputs do not double device memory.
"""
import torch

CHUNK = 1 << 25


def _stats_one(ref, cand, atol, rtol):
    out = {"shape_ok": True, "dtype_ok": True, "ref_shape": list(ref.shape),
           "cand_shape": list(cand.shape) if isinstance(cand, torch.Tensor) else None,
           "ref_dtype": str(ref.dtype),
           "cand_dtype": str(cand.dtype) if isinstance(cand, torch.Tensor) else None}
    if not isinstance(cand, torch.Tensor):
        out["shape_ok"] = False
        out["detail"] = f"output is {type(cand).__name__}, not a tensor"
        return out
    if tuple(ref.shape) != tuple(cand.shape):
        out["shape_ok"] = False
        out["detail"] = f"shape {tuple(cand.shape)} != reference {tuple(ref.shape)}"
        return out
    if ref.dtype != cand.dtype:
        out["dtype_ok"] = False
        out["detail"] = f"dtype {cand.dtype} != reference {ref.dtype}"
        return out
    cand = cand.to(ref.device)
    r_flat = ref.reshape(-1)
    c_flat = cand.reshape(-1)
    n = r_flat.numel()
    max_abs = 0.0
    max_rel = 0.0
    bad = 0
    cand_nonfinite = 0
    ref_nonfinite = 0
    diff_sq = 0.0
    ref_sq = 0.0
    for i in range(0, max(n, 1), CHUNK):
        r = r_flat[i:i + CHUNK].to(torch.float64)
        c = c_flat[i:i + CHUNK].to(torch.float64)
        if r.numel() == 0:
            break
        c_fin = torch.isfinite(c)
        r_fin = torch.isfinite(r)
        cand_nonfinite += int((~c_fin).sum().item())
        ref_nonfinite += int((~r_fin).sum().item())
        d = (c - r).abs()
        d = torch.where(c_fin & r_fin, d, torch.full_like(d, float("inf")))
        tol = atol + rtol * r.abs()
        bad += int((d > tol).sum().item())
        finite_d = torch.where(torch.isfinite(d), d, torch.zeros_like(d))
        max_abs = max(max_abs, float(d.max().item()))
        rel = d / torch.clamp(r.abs(), min=atol)
        max_rel = max(max_rel, float(rel.max().item()))
        diff_sq += float((finite_d * finite_d).sum().item())
        rr = torch.where(r_fin, r, torch.zeros_like(r))
        ref_sq += float((rr * rr).sum().item())
    out.update({
        "numel": n, "mismatched": bad, "cand_nonfinite": cand_nonfinite,
        "ref_nonfinite": ref_nonfinite, "max_abs_err": max_abs, "max_rel_err": max_rel,
        "normwise_rel_err": (diff_sq ** 0.5) / (ref_sq ** 0.5) if ref_sq > 0 else (
            0.0 if diff_sq == 0 else float("inf")),
    })
    return out


def compare_lists(refs, cands, atol, rtol):
    if len(refs) != len(cands):
        return {"count_ok": False, "detail": f"{len(cands)} outputs, reference has {len(refs)}",
                "outputs": []}
    return {"count_ok": True, "outputs": [_stats_one(r, c, atol, rtol) for r, c in zip(refs, cands)]}


def output_profile(t, atol, rtol):
    """What the degeneracy checks need to know of one reference output."""
    if not isinstance(t, torch.Tensor) or t.numel() == 0:
        return {"numel": 0}
    x = t.detach().reshape(-1)
    if not x.is_floating_point():
        x = x.to(torch.float64)
    x = x.to(torch.float64)
    fin = torch.isfinite(x)
    absx = x.abs()
    near_zero = absx <= atol
    # Would an all-zeros answer pass |0 - y| <= atol + rtol*|y| everywhere?
    zeros_pass = bool((absx <= atol + rtol * absx).all().item())
    xf = torch.where(fin, x, torch.zeros_like(x))
    return {
        "numel": x.numel(),
        "nonfinite": int((~fin).sum().item()),
        "near_zero_fraction": float(near_zero.to(torch.float64).mean().item()),
        "zeros_pass": zeros_pass,
        "std": float(xf.std().item()) if x.numel() > 1 else 0.0,
        "max_abs": float(absx[fin].max().item()) if bool(fin.any().item()) else 0.0,
    }
