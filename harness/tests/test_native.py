"""Tests of the native ABI marshalling (native.py) without a GPU: a host-only
shared object, built with the C compiler, is given host pointers through the
same kf_call block a CUDA object gets. It checks what the ABI promises: the
order of inputs, scalars and parameters (named_parameters, then buffers),
shapes and strides in elements, outputs shaped like the reference's."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

HARNESS = Path(__file__).resolve().parents[1]
ABI_DIR = HARNESS.parent / "src" / "compile" / "abi"
sys.path.insert(0, str(HARNESS))

from kforge_harness.native import NativeLoadError, NativeModel  # noqa: E402

CC = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(CC is None, reason="needs a C compiler")

# y = x * weight + alpha * shift (row-broadcast), and y2 = 2y; returns 7 when
# the call block does not look as the ABI says.
SCALE_BIAS = r"""
#include "kforge_native.h"
KFORGE_NATIVE_ABI()
KFORGE_EXPORT int32_t kforge_forward(const kf_call* c) {
  if (c->num_inputs != 1 || c->num_scalars != 1 || c->num_params != 2 || c->num_outputs != 2)
    return 7;
  const kf_tensor* x = &c->inputs[0];
  if (x->dtype != KF_FLOAT32 || x->ndim != 2 || c->params[0].ndim != 1) return 7;
  if (c->outputs[0].shape[0] != x->shape[0] || c->outputs[1].shape[1] != x->shape[1]) return 7;
  const float* w = (const float*)c->params[0].data;
  const float* s = (const float*)c->params[1].data;
  float alpha = (float)c->scalars[0];
  float* y = (float*)c->outputs[0].data;
  float* y2 = (float*)c->outputs[1].data;
  for (int64_t i = 0; i < x->shape[0]; ++i)
    for (int64_t j = 0; j < x->shape[1]; ++j) {
      /* strides in elements: works for a transposed input too */
      float v = ((const float*)x->data)[i * x->strides[0] + j * x->strides[1]] * w[j] + alpha * s[j];
      y[i * x->shape[1] + j] = v;
      y2[i * x->shape[1] + j] = 2.0f * v;
    }
  return 0;
}
"""

WORKSPACE = r"""
#include <string.h>
#include "kforge_native.h"
KFORGE_NATIVE_ABI()
static size_t asked;
KFORGE_EXPORT size_t kforge_workspace_bytes(const kf_call* c) { asked++; return 64; }
KFORGE_EXPORT int32_t kforge_forward(const kf_call* c) {
  if (c->workspace == 0 || c->workspace_bytes != 64 || asked != 1) return 5;
  memset(c->workspace, 0, 64);
  float* y = (float*)c->outputs[0].data;
  for (int64_t i = 0; i < c->inputs[0].shape[0]; ++i) y[i] = ((const float*)c->inputs[0].data)[i] + 1;
  return 0;
}
"""

NO_VERSION = r"""
#include "kforge_native.h"
KFORGE_EXPORT int32_t kforge_forward(const kf_call* c) { return 0; }
"""


class ScaleBias(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(dim))
        self.register_buffer("shift", torch.randn(dim))

    def forward(self, x, alpha):
        y = x * self.weight + alpha * self.shift
        return y, 2 * y


class PlusOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


def build(tmp_path, source, name):
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    lib = tmp_path / f"{name}.so"
    subprocess.run([CC, "-shared", "-fPIC", "-O1", f"-I{ABI_DIR}", str(src), "-o", str(lib)],
                   check=True, capture_output=True)
    return lib


def test_parameters_scalars_and_tuple_outputs_follow_the_abi(tmp_path):
    torch.manual_seed(0)
    ref = ScaleBias(16)
    model = NativeModel(build(tmp_path, SCALE_BIAS, "scale_bias"), ref)
    x = torch.randn(8, 16)
    with torch.no_grad():
        y, y2 = model(x, 0.5)
        want_y, want_y2 = ref(x, 0.5)
    assert torch.allclose(y, want_y) and torch.allclose(y2, want_y2)
    # A non-contiguous input arrives with its own strides.
    xt = torch.randn(16, 8).t()
    with torch.no_grad():
        y, _ = model(xt, -1.25)
        assert torch.allclose(y, ref(xt, -1.25)[0])


def test_outputs_are_fresh_tensors_for_every_call(tmp_path):
    model = NativeModel(build(tmp_path, SCALE_BIAS, "scale_bias"), ScaleBias(4))
    x = torch.randn(2, 4)
    with torch.no_grad():
        a, _ = model(x, 1.0)
        b, _ = model(x, 1.0)
    assert a.data_ptr() != b.data_ptr() and torch.equal(a, b)


def test_workspace_is_asked_once_per_signature(tmp_path):
    model = NativeModel(build(tmp_path, WORKSPACE, "workspace"), PlusOne())
    x = torch.arange(5.0)
    with torch.no_grad():
        for _ in range(3):
            assert torch.equal(model(x), x + 1)  # the object returns 5 if asked twice


def test_a_nonzero_return_fails_the_call(tmp_path):
    model = NativeModel(build(tmp_path, SCALE_BIAS, "scale_bias"), ScaleBias(4))
    with pytest.raises(RuntimeError, match="kforge_forward returned 7"):
        model(torch.randn(2, 4, 1).squeeze(-1).to(torch.float64), 1.0)


def test_an_object_without_the_abi_version_is_refused(tmp_path):
    with pytest.raises(NativeLoadError, match="kforge_abi_version"):
        NativeModel(build(tmp_path, NO_VERSION, "no_version"), PlusOne())


def test_a_missing_object_is_refused(tmp_path):
    with pytest.raises(NativeLoadError, match="cannot load"):
        NativeModel(tmp_path / "absent.so", PlusOne())


def test_meta_shape_derivation_after_warming_replaces_nothing(tmp_path):
    """The first meta op imports torch._dynamo (it rebinds torch.manual_seed):
    warmed before the identity snapshot, a native call changes nothing the
    timer-patching check watches."""
    import types

    from kforge_harness import runtime_checks
    from kforge_harness.native import warm_meta_dispatch

    ref = ScaleBias(4)
    task = types.SimpleNamespace(get_inputs=lambda: [torch.randn(2, 4), 0.5])
    warm_meta_dispatch(task, ref)
    before = runtime_checks.snapshot()
    model = NativeModel(build(tmp_path, SCALE_BIAS, "scale_bias"), ref)
    with torch.no_grad():
        model(torch.randn(2, 4), 0.5)
    assert runtime_checks.changed(before) == []


def test_moving_the_module_makes_new_call_blocks(tmp_path):
    """Call blocks hold parameter pointers; .to() (through _apply) drops them."""
    ref = ScaleBias(4)
    model = NativeModel(build(tmp_path, SCALE_BIAS, "scale_bias"), ref)
    x = torch.randn(2, 4)
    with torch.no_grad():
        model(x, 1.0)
        ref.weight.data = ref.weight.data * 2  # new storage for the weight
        model.to(torch.float32)
        assert torch.allclose(model(x, 1.0)[0], ref(x, 1.0)[0])


def test_inputs_at_new_addresses_or_with_a_new_layout_get_their_own_call_block(tmp_path):
    """A call block is reused only for the same input addresses and layout:
    relocated inputs (timing batches) and an input resized in place are read
    where and as they are now; the output shapes are derived once per
    signature, not per address."""
    ref = ScaleBias(4)
    model = NativeModel(build(tmp_path, SCALE_BIAS, "scale_bias"), ref)
    x = torch.randn(2, 4)
    with torch.no_grad():
        model(x, 1.0)
        moved = x.clone()  # the same values at another address
        moved.mul_(3)
        assert torch.allclose(model(moved, 1.0)[0], ref(moved, 1.0)[0])
        x.resize_(3, 4).normal_()  # the same tensor object, a new shape
        y, _ = model(x, 1.0)
        assert y.shape == (3, 4) and torch.allclose(y, ref(x, 1.0)[0])
    assert len(model._signatures) == 2  # (2, 4) and (3, 4): the move derived nothing


def test_outputs_written_through_preset_layout_are_contiguous_tensors(tmp_path):
    """Output slots keep the shape and strides set when the block was made;
    each call hands over fresh contiguous outputs with those strides."""
    model = NativeModel(build(tmp_path, SCALE_BIAS, "scale_bias"), ScaleBias(4))
    x = torch.randn(16, 4).t()[:, :5].t()  # non-contiguous (5, 4) view
    with torch.no_grad():
        for _ in range(3):
            y, y2 = model(x, 2.0)
            assert y.is_contiguous() and y2.is_contiguous()
            assert torch.allclose(y2, 2 * y)


def test_profile_loads_native_objects_on_cuda_only(tmp_path, capsys):
    """`kforge_harness.profile --native` (the knowledge base's profile of a native
    candidate) builds the object like an evaluation does; off cuda it refuses, as a
    bad program (exit 2), before loading anything."""
    from kforge_harness import profile
    task = HARNESS.parent / "examples" / "tasks" / "fused_bias_relu6_scale.py"
    rc = profile.main(["--task", str(task), "--native", str(tmp_path / "kernel.so"),
                       "--device", "cpu"])
    assert rc == 2
    assert "native candidates run on cuda devices only" in capsys.readouterr().err
