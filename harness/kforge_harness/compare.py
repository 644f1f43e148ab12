"""Element-wise comparison statistics, computed in the trusted reference process.

The verdict (pass/fail) is kforge's: this only measures. Every element is
checked, in float64, in chunks so huge outputs do not double device memory.
"""
import sys

import torch

from .tensors import OpaqueValue

CHUNK = 1 << 25


def _stats_one(ref, cand, atol, rtol):
    out = {"shape_ok": True, "dtype_ok": True, "ref_shape": list(ref.shape),
           "cand_shape": list(cand.shape) if isinstance(cand, torch.Tensor) else None,
           "ref_dtype": str(ref.dtype),
           "cand_dtype": str(cand.dtype) if isinstance(cand, torch.Tensor) else None}
    if not isinstance(cand, torch.Tensor):
        out["shape_ok"] = False
        # An OpaqueValue stands for what the candidate returned: name that.
        kind = cand.type_name if isinstance(cand, OpaqueValue) else type(cand).__name__
        out["detail"] = f"output is {kind}, not a tensor"
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
        # Over finite differences only: NaN/Inf elements are counted in
        # cand_nonfinite/ref_nonfinite, and JSON has no infinity to carry.
        max_abs = max(max_abs, float(finite_d.max().item()))
        rel = finite_d / torch.clamp(r.abs(), min=atol)
        max_rel = max(max_rel, float(rel.max().item()))
        diff_sq += float((finite_d * finite_d).sum().item())
        rr = torch.where(r_fin, r, torch.zeros_like(r))
        ref_sq += float((rr * rr).sum().item())
    out.update({
        "numel": n, "mismatched": bad, "cand_nonfinite": cand_nonfinite,
        "ref_nonfinite": ref_nonfinite, "max_abs_err": max_abs, "max_rel_err": max_rel,
        "normwise_rel_err": (diff_sq ** 0.5) / (ref_sq ** 0.5) if ref_sq > 0 else (
            0.0 if diff_sq == 0 else sys.float_info.max),
    })
    return out


def compare_lists(refs, cands, atol, rtol):
    if len(refs) != len(cands):
        return {"count_ok": False, "detail": f"{len(cands)} outputs, reference has {len(refs)}",
                "outputs": []}
    return {"count_ok": True, "outputs": [_stats_one(r, c, atol, rtol) for r, c in zip(refs, cands)]}


def output_profile(t, atol, rtol):
    """What the degeneracy checks need to know of one reference output,
    reduced in float64 chunks so a multi-GB output needs little extra memory."""
    if not isinstance(t, torch.Tensor) or t.numel() == 0:
        return {"numel": 0}
    flat = t.detach().reshape(-1)
    numel = flat.numel()
    nonfinite = 0
    near_zero = 0
    zeros_pass = True
    total = 0.0
    total_sq = 0.0
    finite_count = 0
    max_abs = 0.0
    for i in range(0, numel, CHUNK):
        x = flat[i:i + CHUNK].to(torch.float64)
        fin = torch.isfinite(x)
        absx = x.abs()
        nonfinite += int((~fin).sum().item())
        near_zero += int((absx <= atol).sum().item())
        # Would an all-zeros answer pass |0 - y| <= atol + rtol*|y| everywhere?
        zeros_pass = zeros_pass and bool((absx <= atol + rtol * absx).all().item())
        xf = x[fin]
        if xf.numel():
            total += float(xf.sum().item())
            total_sq += float((xf * xf).sum().item())
            finite_count += xf.numel()
            max_abs = max(max_abs, float(xf.abs().max().item()))
    std = 0.0
    if numel > 1:
        # Non-finite elements count as zeros, as before: they only matter to
        # the `nonfinite` field.
        mean = total / numel
        var = max(total_sq / numel - mean * mean, 0.0) * numel / (numel - 1)
        std = var ** 0.5
    return {
        "numel": numel,
        "nonfinite": nonfinite,
        "near_zero_fraction": near_zero / numel,
        "zeros_pass": zeros_pass,
        "std": std,
        "max_abs": max_abs,
    }
