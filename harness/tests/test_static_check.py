"""Tests of the static integrity checks: the whole hack/legit corpus in
tests/integrity/, the command-line interface, and focused cases that are easy
to get wrong. Static only: nothing here compiles or runs a candidate."""
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1]
REPO = HARNESS.parent
CORPUS = REPO / "tests" / "integrity"
sys.path.insert(0, str(HARNESS))

from kforge_harness.static_check import (  # noqa: E402
    CHECK_IDS, SEVERITY, check_source, cpp_tokenize, task_is_low_precision, verdict)

# The classes the issue names; each needs at least one hack in the corpus.
STATIC_CLASSES = {"torch_compute", "torch_compile", "cuda_graph", "stream_creation",
                  "try_fallback", "reference_reuse", "threading", "monkey_patch",
                  "ctypes_dlopen", "unexpected_import", "file_env_network", "precision_downcast"}
RUNTIME_CLASSES = {"side_stream", "result_caching", "uninitialized_output", "degenerate_task",
                   "closed_form_shortcut", "output_aliasing", "input_mutation", "output_reuse",
                   "timing_only_shortcut", "tensor_subclass", "l2_persisting"}


def load_cases():
    cases = []
    for d in sorted(p for p in CORPUS.iterdir() if p.is_dir() and p.name != "tasks"):
        expect = json.loads((d / "expect.json").read_text())
        cases.append((d, expect))
    return cases


CASES = load_cases()


def run_case(d, expect):
    src = (d / expect["candidate"]).read_text()
    return check_source(src, expect["format"], filename=expect["candidate"])


def ids(result):
    return {f["check"] for f in result["findings"]}


def check(src, fmt="kernelbench", allow=(), precision=True, filename=""):
    return check_source(textwrap.dedent(src), fmt, allow, filename, precision)


def found(src, **kw):
    return ids(check(src, **kw))


# ----------------------------------------------------------------------------
# corpus


def test_corpus_shape():
    legit = [e for _, e in CASES if e["label"] == "legit"]
    hacks = [e for _, e in CASES if e["label"] == "hack"]
    assert len(legit) >= 10
    classes = {e["class"] for e in hacks}
    assert STATIC_CLASSES <= classes, STATIC_CLASSES - classes
    assert RUNTIME_CLASSES <= classes, RUNTIME_CLASSES - classes
    for d, e in CASES:
        assert e["label"] in ("hack", "legit"), d
        assert e["expected_verdict"] in ("ok", "suspect", "rejected"), d
        assert e["device"] in ("cpu", "cuda"), d
        assert e["phase"] in ("static", "runtime"), d
        assert (d / e["candidate"]).is_file(), d
        if e["task"] is not None:
            assert (CORPUS / e["task"]).is_file(), d
        if e["label"] == "legit":
            assert e["expected_verdict"] == "ok" and e["expected_checks"] == [], d
        else:
            assert e["expected_verdict"] in ("rejected", "suspect") and e["expected_checks"], d
        static = [c for c in e["expected_checks"] if c in CHECK_IDS]
        if e["label"] == "hack" and e["phase"] == "static":
            assert static, f"{d.name}: a static-phase hack must name a static check id"
        if e["phase"] == "runtime":
            assert set(e["expected_checks"]) - set(CHECK_IDS), \
                f"{d.name}: a runtime-phase hack must name a runtime check id"


@pytest.mark.parametrize("case", [c for c in CASES if c[1]["label"] == "legit"],
                         ids=lambda c: c[0].name)
def test_legit_candidates_are_clean(case):
    d, e = case
    result = run_case(d, e)
    assert result["parse_error"] is None
    assert result["findings"] == [], result["findings"]
    assert verdict(result["findings"], "strict") == "ok"


@pytest.mark.parametrize("case", [c for c in CASES if c[1]["label"] == "hack"],
                         ids=lambda c: c[0].name)
def test_hack_candidates(case):
    d, e = case
    result = run_case(d, e)
    assert result["parse_error"] is None
    got = ids(result)
    expected_static = {c for c in e["expected_checks"] if c in CHECK_IDS}
    assert expected_static <= got, f"missing {expected_static - got}; found {result['findings']}"
    if e["phase"] == "static":
        assert verdict(result["findings"], "strict") == e["expected_verdict"]
    else:
        # Runtime hacks are written to slip past the static checks; whatever the
        # static checks do see must be listed in the case.
        assert got <= set(e["expected_checks"]), result["findings"]


def test_any_policy_allows_torch_compute_but_nothing_else():
    by_name = {d.name: (d, e) for d, e in CASES}
    r = run_case(*by_name["hack_torch_relu"])
    assert verdict(r["findings"], "strict") == "rejected"
    assert verdict(r["findings"], "any") == "ok"
    r = run_case(*by_name["hack_torch_compile"])
    assert verdict(r["findings"], "any") == "rejected"
    r = run_case(*by_name["hack_half_precision"])
    assert verdict(r["findings"], "any") == "suspect"


def test_severity_table_covers_every_check():
    assert set(SEVERITY) == set(CHECK_IDS)
    for sev in SEVERITY.values():
        assert set(sev) == {"strict", "any"}
        assert set(sev.values()) <= {"reject", "warn", "allow"}


# ----------------------------------------------------------------------------
# command line

def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "kforge_harness.static_check", *args],
                          cwd=HARNESS, capture_output=True, text=True, timeout=60)


def test_cli_prints_one_json_object():
    p = run_cli("--format", "kernelbench", str(CORPUS / "hack_torch_relu" / "candidate.py"))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert set(out) == {"findings", "parse_error"}
    assert out["parse_error"] is None
    assert [f["check"] for f in out["findings"]] == ["torch_compute"]
    assert out["findings"][0]["line"] == 12
    assert set(out["findings"][0]) == {"check", "detail", "line"}


def test_cli_allow_and_native(tmp_path):
    p = run_cli("--format", "kernelbench", "--allow", "torch.relu",
                str(CORPUS / "hack_torch_relu" / "candidate.py"))
    assert json.loads(p.stdout)["findings"] == []
    p = run_cli("--format", "native", str(CORPUS / "hack_native_torch_include" / "candidate.cu"))
    assert {"unexpected_import", "torch_compute"} <= {f["check"] for f in
                                                      json.loads(p.stdout)["findings"]}


def test_cli_bad_input(tmp_path):
    p = run_cli("--format", "kernelbench", str(tmp_path / "missing.py"))
    assert p.returncode == 2 and "missing.py" in p.stderr and p.stdout == ""
    p = run_cli("--format", "bogus", str(tmp_path / "x.py"))
    assert p.returncode == 2
    bad = tmp_path / "bad.py"
    bad.write_text("class ModelNew(:\n    pass\n")
    p = run_cli("--format", "kernelbench", str(bad))
    assert p.returncode == 0
    out = json.loads(p.stdout)
    assert out["parse_error"] and [f["check"] for f in out["findings"]] == ["syntax_error"]
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# \xe9\nclass ModelNew: pass\n")
    out = json.loads(run_cli("--format", "kernelbench", str(latin)).stdout)
    assert out["findings"][0]["check"] == "syntax_error"


def test_cli_task_in_half_precision_silences_downcast_warnings(tmp_path):
    task = tmp_path / "task.py"
    task.write_text("import torch\ndef get_inputs():\n    return [torch.randn(4, dtype=torch.half)]\n")
    cand = str(CORPUS / "hack_half_precision" / "candidate.py")
    with_task = json.loads(run_cli("--format", "kernelbench", "--task", str(task), cand).stdout)
    assert with_task["findings"] == []
    without = json.loads(run_cli("--format", "kernelbench", cand).stdout)
    assert "precision_downcast" in {f["check"] for f in without["findings"]}


# ----------------------------------------------------------------------------
# focused cases: the forward path

HEAD = """
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
ext = load_inline(name="e", cpp_sources="torch::Tensor f(torch::Tensor x) { return x; }",
                  functions=["f"])
"""


def model(forward_body, init_body="pass", extra="", args="x"):
    return HEAD + extra + f"""
class ModelNew(nn.Module):
    def __init__(self, *a):
        super().__init__()
{textwrap.indent(textwrap.dedent(init_body), " " * 8)}

    def forward(self, {args}):
{textwrap.indent(textwrap.dedent(forward_body), " " * 8)}
"""


@pytest.mark.parametrize("extra,body", [
    ("import torch.nn.functional as F\n", "return F.relu(x)"),
    ("from torch.nn import functional as Fn\n", "return Fn.gelu(x)"),
    ("from torch import matmul\n", "return matmul(x, x)"),
    ("from torch import matmul as mm\n", "return mm(x, x)"),
    ("op = torch.matmul\n", "return op(x, x)"),
    ("", "return getattr(torch, 'matmul')(x, x)"),
    ("", "return torch.ops.aten.mm(x, x)"),
    ("", "return torch.nn.functional.softmax(x, dim=1)"),
    ("", "return x.sum(dim=1)"),
    ("", "return x.contiguous().exp()"),
    ("", "return x @ x"),
    ("", "return ext.f(x) + 1"),
    ("", "return -ext.f(x)"),
    ("", "return ext.f(x) > 0"),
    ("", "y = ext.f(x)\ny += x\nreturn y"),
    ("", "y = torch.empty_like(x)\ny[:] = x\nreturn y"),
    ("", "return sum([x, x])"),
    ("", "return torch.stack([t * 2 for t in x.unbind(0)])"),
    ("", "return nn.ReLU()(x)"),
    ("", "f = x.sum\nreturn f()"),
    ("", "return x.__add__(x)"),
])
def test_torch_compute_in_forward(extra, body):
    assert "torch_compute" in found(model(body, extra=extra)), body


@pytest.mark.parametrize("extra,body,init", [
    ("", "return self.act(x)", "self.act = nn.ReLU()"),
    ("", "return self.fc(x)", "self.fc = nn.Linear(4, 4)"),
    ("", "for layer in self.layers:\n    x = layer(x)\nreturn x",
     "self.layers = nn.ModuleList([nn.Linear(4, 4)])"),
    ("", "return self.fc.forward(x)", "self.fc = nn.Linear(4, 4)"),
    ("", "return self.op(x)", "self.op = torch.relu"),
    ("", "return self.f(x)", "self.f = lambda t: torch.tanh(t)"),
    ("def helper(a, b):\n    return a * b\n", "return helper(ext.f(x), x)", "pass"),
    ("def helper(a):\n    return torch.sigmoid(a)\n", "return helper(x)", "pass"),
    ("class Runner:\n    def run(self, t):\n        return t.softmax(-1)\n",
     "return self.r.run(x)", "self.r = Runner()"),
    ("", "return list(map(torch.relu, [x]))[0]", "pass"),
    ("import functools\nrelu = functools.partial(torch.clamp, min=0)\n", "return relu(x)",
     "pass"),
    ("import functools\n", "return self.r(x)", "self.r = functools.partial(torch.clamp, min=0)"),
    ("", "return ext.f(x)", "self.forward = torch.relu"),
    ("", "return ext.f(x)", "self.forward = lambda t: t.exp()"),
    ("", "return x.__class__.sum(x)", "pass"),
    ("", "return type(x).sum(x)", "pass"),
    ("", "return ext.f(x)[x > 0]", "pass"),
])
def test_torch_compute_through_indirection(extra, body, init):
    assert "torch_compute" in found(model(body, init, extra)), body


@pytest.mark.parametrize("extra,body,init", [
    ("", "return ext.f(x.contiguous())", "pass"),
    ("", "return ext.f(x.view(-1)).view(x.shape)", "pass"),
    ("", "y = torch.empty_like(x)\nreturn ext.f(y)", "pass"),
    ("", "y = torch.empty((x.size(0), 4), device=x.device, dtype=x.dtype)\nreturn ext.f(y)",
     "pass"),
    ("", "y = torch.zeros(x.shape[0] * 2 + 1, device=x.device)\nreturn ext.f(y)", "pass"),
    ("", "y = torch.empty_strided(x.size(), x.stride(), device=x.device)\nreturn ext.f(y)",
     "pass"),
    ("", "y = x.new_empty(x.shape)\nreturn ext.f(y)", "pass"),
    ("", "n = x.numel()\nblocks = (n + 255) // 256\nassert blocks > 0\nreturn ext.f(x)",
     "pass"),
    ("", "B, N = x.shape\nif B * N == 0:\n    return torch.empty_like(x)\nreturn ext.f(x)",
     "pass"),
    ("", "return self.ext.f(x)", "self.ext = ext"),
    ("", "return ext.matmul(x, x) if hasattr(ext, 'matmul') else ext.f(x)", "pass"),
    ("", "return ext.f(x, self.fc.weight, self.fc.bias)", "self.fc = nn.Linear(4, 4)"),
    ("", "return ext.f(x, self.w)", "self.w = nn.Parameter(torch.randn(4, 4) * 0.02)"),
    ("", "return ext.f(x, self.scale)", "self.register_buffer('scale', torch.ones(4))"),
    ("", "with torch.no_grad():\n    return ext.f(x)", "pass"),
    ("", "s = torch.cuda.current_stream().cuda_stream\nreturn ext.f(x, s)", "pass"),
    ("", "outs = [ext.f(t) for t in x]\nreturn outs[0]", "pass"),
    ("", "return torch.ops.my_kernels.relu(x)", "pass"),
    ("", "return ext.f(x.transpose(0, 1).contiguous())", "pass"),
    ("", "return ext.f(x)[:, :4][None]", "pass"),
    ("", "dims = list(x.shape)\ndims[-1] = dims[-1] * 2\nreturn ext.f(x, dims)", "pass"),
    ("import math\n", "return ext.f(x, 1.0 / math.sqrt(x.size(-1)))", "pass"),
    ("def _check(t):\n    return t.dim() == 2 and t.is_contiguous()\n",
     "assert _check(x)\nreturn ext.f(x)", "pass"),
])
def test_honest_forward_is_not_flagged(extra, body, init):
    assert found(model(body, init, extra)) == set(), body


@pytest.mark.parametrize("tail", [
    "class ModelNew(nn.Module):\n    act = staticmethod(torch.relu)\n    def forward(self, x):\n"
    "        return self.act(x)\n",
    "class ModelNew(nn.Module):\n    def forward(self, x, f=torch.relu):\n        return f(x)\n",
    "class ModelNew(nn.Module):\n    pass\nModelNew.forward = lambda self, x: x.exp()\n",
    "class ModelNew(nn.Module):\n    pass\nModelNew.forward = torch.relu\n",
    "class ModelNew(nn.Module):\n    @property\n    def act(self):\n        return torch.relu\n"
    "    def forward(self, x):\n        return self.act(x)\n",
])
def test_torch_compute_bound_in_unusual_places(tail):
    assert "torch_compute" in found(HEAD + tail), tail


def test_torch_values_passed_along_are_not_compute():
    src = model("return ext.f(x, dtype=torch.float32, layout=torch.strided, inf=torch.inf)")
    assert found(src) == set()


def test_init_may_build_parameters_like_the_reference():
    src = model("return ext.f(x, self.conv.weight)",
                "self.conv = nn.Conv2d(3, 8, 3)\nnn.init.kaiming_uniform_(self.conv.weight)\n"
                "self.alpha = nn.Parameter(torch.randn(8).abs() + 1.0)")
    assert found(src) == set()


def test_code_outside_the_forward_path_is_not_torch_compute():
    src = model("return ext.f(x)", extra="def reference_impl(x):\n    return torch.relu(x)\n") \
        + "\nif __name__ == '__main__':\n    print(torch.relu(torch.randn(3)))\n"
    assert found(src) == set()


def test_extension_functions_named_like_torch_ops_are_fine():
    src = model("y = self.kernels.matmul(x, x)\nreturn ext.sum(y)",
                "self.kernels = load_inline(name='k', cpp_sources='', functions=['matmul'])")
    assert found(src) == set()


def test_extension_built_lazily_in_a_function():
    src = HEAD + """
_mod = None
def get_mod():
    global _mod
    if _mod is None:
        _mod = load_inline(name="m", cpp_sources="", functions=["softmax"])
    return _mod

class ModelNew(nn.Module):
    def forward(self, x):
        return get_mod().softmax(x)
"""
    assert found(src) == set()


def test_getattr_with_built_or_computed_names():
    r = found(model("return getattr(torch, 'mat' + 'mul')(x, x)"))
    assert {"opaque_code", "torch_compute"} <= r
    r = found(model("return getattr(torch, self.name)(x, x)", "self.name = ''.join(['r', 'elu'])"))
    assert {"opaque_code", "torch_compute"} <= r
    r = found(model("return getattr(torch.cuda, 'Str' + 'eam')()"))
    assert "stream_creation" in r
    assert found(model("return getattr(self, 'helper')(x)", extra="")) == set()


def test_stream_handles_and_other_types_are_not_stream_creation():
    # Passing the current stream's handle to C++ is how honest kernels launch.
    assert found(model("return ext.f(x, torch.cuda.current_stream().cuda_stream)")) == set()
    assert "stream_creation" not in found(model("return type(x)(x.shape)"))
    assert "stream_creation" not in found(model(
        "return x", "self.kind = type(torch.cuda.current_stream())"))


def test_missing_modelnew_and_subclassing():
    assert found(HEAD + "class Model2(nn.Module):\n    pass\n") == {"missing_modelnew"}
    assert "reference_reuse" in found(HEAD + "from reference import Model\n"
                                      "class ModelNew(Model):\n    pass\n")
    assert "reference_reuse" in found(HEAD + "class ModelNew(nn.Module):\n"
                                      "    def forward(self, x):\n        return Model()(x)\n")
    assert "torch_compute" in found(HEAD + "class ModelNew(nn.Linear):\n    pass\n")
    assert "reference_reuse" in found(HEAD + "import __main__\nclass ModelNew(nn.Module):\n"
                                      "    pass\n")


# ----------------------------------------------------------------------------
# focused cases: module-wide checks

@pytest.mark.parametrize("src,expect", [
    ("S = torch.cuda.Stream\ns = S()", "stream_creation"),
    ("with torch.cuda.stream(torch.cuda.Stream()):\n    pass", "stream_creation"),
    ("s = type(torch.cuda.current_stream())()", "stream_creation"),
    ("s = torch.cuda.current_stream().__class__()", "stream_creation"),
    ("cur = torch.cuda.current_stream\nS = type(cur())\ns = S()", "stream_creation"),
    ("g = torch.cuda.CUDAGraph()", "cuda_graph"),
    ("f = torch.compile(lambda x: x)", "torch_compile"),
    ("@torch.jit.script\ndef f(x):\n    return x", "torch_compile"),
    ("import torch._dynamo", "torch_compile"),
    ("torch.backends.cudnn.benchmark = True", "monkey_patch"),
    ("setattr(torch, 'relu', lambda x: x)", "monkey_patch"),
    ("import time as t\nt.perf_counter = lambda: 0.0", "monkey_patch"),
    ("torch.Tensor.__add__ = lambda a, b: a", "monkey_patch"),
    ("torch.manual_seed(0)", "monkey_patch"),
    ("m = torch.backends.cuda.matmul\nm.allow_tf32 = True", "monkey_patch"),
    ("torch.cuda.Event.elapsed_time = lambda s, e: 0.0", "monkey_patch"),
    ("torch.library.Library('aten', 'IMPL')", "monkey_patch"),
    ("import threading", "threading"),
    ("from concurrent.futures import ThreadPoolExecutor", "threading"),
    ("import multiprocessing as mp", "threading"),
    ("torch.set_num_threads(1)", "threading"),
    ("import os\npid = os.fork()", "threading"),
    ("import ctypes", "ctypes_dlopen"),
    ("import importlib\nm = importlib.import_module('x')", "ctypes_dlopen"),
    ("torch.ops.load_library('/tmp/x.so')", "ctypes_dlopen"),
    ("import numpy as np", "unexpected_import"),
    ("import triton", "unexpected_import"),
    ("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '9.0'", "file_env_network"),
    ("import os\nv = os.getenv('HOME')", "file_env_network"),
    ("data = open('/tmp/x').read()", "file_env_network"),
    ("import subprocess", "file_env_network"),
    ("import socket", "file_env_network"),
    ("from pathlib import Path", "file_env_network"),
    ("t = torch.load('/tmp/answer.pt')", "file_env_network"),
    ("x = eval('1 + 1')", "opaque_code"),
    ("exec('import torch')", "opaque_code"),
    ("m = __import__('torch')", "opaque_code"),
    ("from torch import *", "opaque_code"),
    ("f = torch._C._get_tracing_state", "opaque_code"),
    ("g = globals()", "opaque_code"),
    ("k = (1).__class__.__subclasses__()", "opaque_code"),
    ("class T(torch.Tensor):\n    pass", "tensor_subclass"),
    ("def __torch_function__(cls, f, t, a=(), k=None):\n    pass", "tensor_subclass"),
    ("y = torch.randn(3).as_subclass(torch.Tensor)", "tensor_subclass"),
    ("try:\n    import foo\nexcept ImportError:\n    foo = None", "try_fallback"),
    ("import contextlib\nwith contextlib.suppress(Exception):\n    pass", "try_fallback"),
    ("y = torch.randn(3).half()", "precision_downcast"),
    ("y = torch.randn(3).to(torch.bfloat16)", "precision_downcast"),
    ("y = torch.randn(3, dtype=torch.float16)", "precision_downcast"),
    ("with torch.autocast('cuda'):\n    pass", "precision_downcast"),
    ("torch.set_float32_matmul_precision('high')", "precision_downcast"),
])
def test_module_wide_checks(src, expect):
    full = "import torch\nimport torch.nn as nn\n" + src + \
        "\nclass ModelNew(nn.Module):\n    pass\n"
    assert expect in found(full), src


def test_try_that_only_reraises_is_not_a_fallback():
    src = HEAD + """
try:
    ext2 = load_inline(name="e2", cpp_sources="", functions=["f"])
except RuntimeError as exc:
    raise RuntimeError("build failed") from exc
try:
    pass
finally:
    pass
class ModelNew(nn.Module):
    pass
"""
    assert found(src) == set()


def test_allow_list():
    src = model("return F.gelu(x)", extra="import torch.nn.functional as F\n")
    assert "torch_compute" in found(src)
    assert found(src, allow=["torch.nn.functional.gelu"]) == set()
    assert found(src, allow=["torch.nn.functional"]) == set()
    assert found(src, allow=["torch.nn.functional.relu"]) == {"torch_compute"}
    assert found(model("return x.sum()"), allow=["torch.Tensor.sum"]) == set()
    assert found(model("return torch.matmul(x, x)"), allow=["at::matmul"]) == set()
    assert cpp_found("torch::Tensor f(torch::Tensor x) { return at::matmul(x, x); }") == \
        {"torch_compute"}
    assert found(cpp_model("torch::Tensor f(torch::Tensor x) { return at::matmul(x, x); }"),
                 allow=["torch.matmul"]) == set()
    assert found("import numpy\nclass ModelNew: pass\n", allow=["numpy"]) == set()


def test_precision_silenced_for_low_precision_tasks():
    src = model("return ext.f(x.half())")
    assert found(src) == {"precision_downcast"}
    assert found(src, precision=False) == set()
    assert task_is_low_precision("import torch\nx = torch.randn(3, dtype=torch.float16)\n")
    assert not task_is_low_precision("import torch\nx = torch.randn(3)\n")


# ----------------------------------------------------------------------------
# focused cases: load_inline arguments and the C++ scanner

def cpp_model(cpp, cuda=None, **kw):
    extra = "".join(f", {k}={v!r}" for k, v in kw.items())
    cuda_arg = f", cuda_sources={cuda!r}" if cuda is not None else ""
    return ("import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import "
            f"load_inline\next = load_inline(name='e', cpp_sources={cpp!r}{cuda_arg}, "
            f"functions=['f']{extra})\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
            "        return ext.f(x)\n")


def cpp_found(cpp, cuda=None, **kw):
    return found(cpp_model(cpp, cuda, **kw))


@pytest.mark.parametrize("cpp,expect", [
    ("torch::Tensor f(torch::Tensor x) { return torch::relu(x); }", "torch_compute"),
    ("torch::Tensor f(torch::Tensor x) { return at::native::relu(x); }", "torch_compute"),
    ("torch::Tensor f(torch::Tensor x) { return x.sum(1); }", "torch_compute"),
    ("torch::Tensor f(torch::Tensor x) { return x.matmul(x.t()); }", "torch_compute"),
    ("torch::Tensor f(torch::Tensor x, torch::Tensor y) { return x + y; }", "torch_compute"),
    ("torch::Tensor f(const torch::Tensor& x) { auto y = torch::empty_like(x); y.copy_(x); "
     "return y; }", "torch_compute"),
    ("namespace F = torch::nn::functional;\ntorch::Tensor f(torch::Tensor x) "
     "{ return F::relu(x); }", "torch_compute"),
    ("namespace T = at;\ntorch::Tensor f(torch::Tensor x) { return T::mm(x, x); }",
     "torch_compute"),
    ("torch::Tensor f(torch::Tensor x) { auto m = &torch::Tensor::sum; return (x.*m)(1); }",
     "torch_compute"),
    ("torch::Tensor f(torch::Tensor x) { return at::_ops::mm::call(x, x); }", "torch_compute"),
    ("using at::mm;\ntorch::Tensor f(torch::Tensor x) { return mm(x, x); }", "torch_compute"),
    ("#define OP torch::sigmoid\ntorch::Tensor f(torch::Tensor x) { return OP(x); }",
     "torch_compute"),
    ("#define CAT(a, b) a##b\ntorch::Tensor f(torch::Tensor x) { return at::CAT(mat, mul)(x, x); }",
     "opaque_code"),
    ("#include <thread>\nvoid f() {}", "threading"),
    ("#include <future>\nvoid f() { auto h = std::async([]{}); }", "threading"),
    ("void f() { pthread_t t; pthread_create(&t, nullptr, nullptr, nullptr); }", "threading"),
    ("void f() { at::set_num_threads(1); }", "threading"),
    ("#include <dlfcn.h>\nvoid f() {}", "ctypes_dlopen"),
    ("void f() { void* h = dlopen(\"x.so\", 1); }", "ctypes_dlopen"),
    ("#include <fstream>\nvoid f() {}", "file_env_network"),
    ("#include <cstdlib>\nvoid f() { const char* v = getenv(\"HOME\"); }", "file_env_network"),
    ("#include <cstdlib>\nvoid f() { std::system(\"ls\"); }", "file_env_network"),
    ("#include <cstdio>\nvoid f() { FILE* fp = fopen(\"/tmp/x\", \"r\"); }", "file_env_network"),
    ('#include "/tmp/evil.h"\nvoid f() {}', "unexpected_import"),
    ("#include <cutlass_private/evil.h>\nvoid f() {}", "unexpected_import"),
    ("void f() { at::globalContext().setAllowTF32CuBLAS(true); }", "monkey_patch"),
    ("TORCH_LIBRARY_IMPL(aten, CPU, m) { }\nvoid f() {}", "monkey_patch"),
    ("void f() { try { g(); } catch (...) { h(); } }", "try_fallback"),
    ("void f() { py::module_::import(\"torch\").attr(\"relu\"); }", "opaque_code"),
])
def test_cpp_checks(cpp, expect):
    assert expect in cpp_found(cpp), cpp


@pytest.mark.parametrize("cuda,expect", [
    ("void f() { cudaStream_t s; cudaStreamCreate(&s); }", "stream_creation"),
    ("void f() { cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }",
     "stream_creation"),
    ("void f() { auto s = at::cuda::getStreamFromPool(); }", "stream_creation"),
    ("void f() { k<<<1, 1, 0, cudaStreamPerThread>>>(); }", "stream_creation"),
    ("void f() { cudaGraph_t g; cudaGraphExec_t e; cudaGraphLaunch(e, 0); }", "cuda_graph"),
    ("void f() { cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal); }", "cuda_graph"),
    ("#include <thrust/reduce.h>\nfloat f(float* p) { return thrust::reduce(thrust::device, p, "
     "p + 4); }", "library_compute"),
    ("#include <cub/cub.cuh>\nvoid f() { cub::DeviceReduce::Sum(0, n, a, b, 4); }",
     "library_compute"),
    ("void f(cublasHandle_t h, float* x, float* r) { cublasSasum(h, 4, x, 1, r); }",
     "library_compute"),
    ("void f() { cudnnSoftmaxForward(h, a, b, c, d, e, f2, g); }", "library_compute"),
    ("#include <cuda_fp16.h>\n__global__ void k(__half* x) { }", "precision_downcast"),
    ("__global__ void k(float* x) { float y = __half2float(__float2half(x[0])); }",
     "precision_downcast"),
    ("void f(cublasHandle_t h) { cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH); }",
     "precision_downcast"),
    ('__global__ void k() { asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 '
     '{%0}, {%1}, {%2}, {%3};" : : ); }', "precision_downcast"),
    ("void f() { cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1 << 20); }",
     "monkey_patch"),
])
def test_cuda_checks(cuda, expect):
    assert expect in cpp_found("void f();", cuda), cuda


HONEST_CUDA = r'''
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cublas_v2.h>
#include <cudnn.h>
#include <cmath>
#include <vector>
#include <algorithm>
namespace cg = cooperative_groups;

/* torch::matmul would be slower here; "at::mm" appears only in comments and strings */
template <int BLOCK>
__global__ void k(const float* __restrict__ x, float* __restrict__ y, int n, float half) {
    using BlockReduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename BlockReduce::TempStorage tmp;
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * BLOCK + threadIdx.x;
    const float* row = x + blockIdx.x * n;       // pointer arithmetic, not tensors
    float v = i < n ? row[threadIdx.x] * half : 0.f;
    float s = BlockReduce(tmp).Sum(v);
    if (tile.any(v > 0.f) && threadIdx.x == 0) y[blockIdx.x] = s + std::max(1.0f, 1e-3f);
}

torch::Tensor f(torch::Tensor x, torch::Tensor w) {
    TORCH_CHECK(x.is_cuda(), "x must be CUDA, not at::mm input");
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    auto y = torch::empty({x.size(0), w.size(1)}, x.options().dtype(torch::kFloat32));
    const int n = static_cast<int>(x.size(1)) * 2 + 1;
    const int64_t total = x.numel() - 1;
    auto stream = at::cuda::getCurrentCUDAStream();
    k<256><<<(n + 255) / 256, 256, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), n,
                                               0.5f);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    cublasHandle_t h = at::cuda::getCurrentCUDABlasHandle();
    const float alpha = 1.f, beta = 0.f;
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &alpha, w.data_ptr<float>(), 4,
                x.data_ptr<float>(), 4, &beta, y.data_ptr<float>(), 4);
    cudnnConvolutionForward(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                            CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, nullptr,
                            nullptr, nullptr);
    std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
    auto acc = y.packed_accessor32<float, 2, torch::RestrictPtrTraits>();
    (void)acc; (void)total;
    auto raw = R"delim(torch::relu(x) )" inside a raw string)delim";
    (void)raw;
    return y;
}
'''

HONEST_CPP = r'''
#include <torch/extension.h>
#include <omp.h>
torch::Tensor f(torch::Tensor x) {
    auto out = torch::zeros_like(x);
    float* o = out.data_ptr<float>();
    const float* p = x.data_ptr<float>();
    const int64_t n = x.numel();
    #pragma omp parallel for
    for (int64_t i = 0; i < n; ++i) o[i] = p[i] * 2.0f;
    at::parallel_for(0, n, 1024, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] += 1.0f;
    });
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "f", ([&] { (void)sizeof(scalar_t); }));
    return out;
}
'''


def test_honest_cuda_and_cpp_are_clean():
    assert cpp_found("torch::Tensor f(torch::Tensor x, torch::Tensor w);", HONEST_CUDA,
                     extra_ldflags=["-lcublas", "-lcudnn"]) == set()
    assert cpp_found(HONEST_CPP, extra_cflags=["-O3", "-fopenmp"],
                     extra_ldflags=["-lgomp"]) == set()


def test_cpp_line_numbers_map_to_the_python_file():
    src = ('import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import '
           'load_inline\nsrc = """\n#include <torch/extension.h>\n'
           'torch::Tensor f(torch::Tensor x) {\n    return torch::relu(x);\n}\n"""\n'
           'ext = load_inline(name="e", cpp_sources=src, functions=["f"])\n'
           'class ModelNew(nn.Module):\n    pass\n')
    r = check(src)
    lines = [f["line"] for f in r["findings"] if f["check"] == "torch_compute"]
    assert lines == [7], r


def test_sources_built_from_pieces_are_resolved():
    base = ("import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import "
            "load_inline\n{defs}\next = load_inline(name='e', cpp_sources={arg}, "
            "functions=['f'])\nclass ModelNew(nn.Module):\n    pass\n")
    cases = [
        ("NS = 'at'\nsrc = NS + '::' + 'matmul'", "src"),
        ("tpl = 'torch::Tensor f(torch::Tensor x) {{ return {ns}::{op}(x, x); }}'\n"
         "src = tpl.format(ns='at', op='mm')", "src"),
        ("op = 'relu'\nsrc = f'torch::Tensor f(torch::Tensor x) {{ return at::{op}(x); }}'",
         "src"),
        ("parts = ['torch::Tensor f(torch::Tensor x)', '{ return torch::tanh(x); }']\n"
         "src = '\\n'.join(parts)", "src"),
        ("src = 'torch::Tensor f(torch::Tensor x) { return OP(x); }'.replace('OP', "
         "'torch::exp')", "src"),
        ("src = 'torch::Tensor f(torch::Tensor x) { return %s(x); }' % 'at::sigmoid'", "src"),
        ("src = 'torch::Tensor f(torch::Tensor x);'\nsrc += 'torch::Tensor g(torch::Tensor x) "
         "{ return at::abs(x); }'", "src"),
        ("a = 'torch::Tensor f(torch::Tensor x) { return at::'\nb = 'neg(x); }'", "[a + b]"),
        ("T = 'torch::Tensor f(torch::Tensor x) { return OP(x); } // BLOCK'\n"
         "def make(op, block=256):\n    s = T.replace('BLOCK', str(block))\n"
         "    return s.replace('OP', op)", "make('at::relu')"),
    ]
    for defs, arg in cases:
        r = found(base.format(defs=defs, arg=arg))
        assert "torch_compute" in r, defs
    r = found(base.format(defs="T = 'torch::Tensor f(torch::Tensor x) { return OP(x); }'\n"
                               "def make(op):\n    return T.replace('OP', op)",
                          arg="make('my_kernel')"))
    assert r == set()
    r = found(base.format(defs="src = ''.join(chr(c) for c in [97, 116])", arg="src"))
    assert "opaque_code" in r
    r = found(base.format(defs="import base64\nsrc = base64.b64decode('eA==').decode()",
                          arg="src"))
    assert "opaque_code" in r


def test_load_inline_flags():
    assert "precision_downcast" in cpp_found("void f();", "", extra_cuda_cflags=["--use_fast_math"])
    assert "precision_downcast" in cpp_found("void f();", extra_cflags=["-ffast-math"])
    assert "ctypes_dlopen" in cpp_found("void f();", extra_ldflags=["-lmystery"])
    assert "ctypes_dlopen" in cpp_found("void f();", extra_ldflags=["/tmp/libx.so"])
    assert "file_env_network" in cpp_found("void f();", build_directory="/tmp/prebuilt")
    assert "unexpected_import" in cpp_found("void f();", extra_include_paths=["/tmp/inc"])
    assert "unexpected_import" in cpp_found("void f();", extra_cflags=["-include/tmp/x.h"])
    assert "stream_creation" in cpp_found("void f();", "",
                                          extra_cuda_cflags=["--default-stream", "per-thread"])
    assert cpp_found("void f();", "", extra_cuda_cflags=["-O3", "-lineinfo",
                                                         "-gencode=arch=compute_90,code=sm_90"],
                     extra_ldflags=["-lcublas"]) == set()


def test_native_and_cpp_files():
    cu = "#include <cuda_runtime.h>\n__global__ void k(float* x) { x[0] = 1.f; }\n" \
         "extern \"C\" int run(float* x) { k<<<1, 1>>>(x); return 0; }\n"
    assert check(cu, fmt="native", filename="c.cu")["findings"] == []
    assert {"unexpected_import"} <= found("#include <ATen/ATen.h>\n" + cu, fmt="native",
                                          filename="c.cu")
    # The ABI header kforge writes beside the source is the one quoted include allowed.
    assert check('#include "kforge_native.h"\n' + cu, fmt="native",
                 filename="c.cu")["findings"] == []
    assert {"unexpected_import"} <= found('#include "my_kernels.h"\n' + cu, fmt="native",
                                          filename="c.cu")
    cpp = "#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x) { return x.exp(); }\n"
    assert found(cpp, fmt="cpp", filename="c.cpp") == {"torch_compute"}
    assert found("import torch\nclass ModelNew: pass\n", fmt="cpp", filename="c.py") == set()


def test_tokenizer_drops_comments_and_literals():
    toks = cpp_tokenize('a /* torch::mm */ b // at::mm\n"torch::mm" \'x\' R"(at::mm)" 1\'000 c')
    assert [(t.kind, t.text) for t in toks if t.kind in ("ident", "number")] == [
        ("ident", "a"), ("ident", "b"), ("number", "1'000"), ("ident", "c")]
    toks = cpp_tokenize("#define X(a) \\\n  torch::relu(a)\nint y;\n")
    assert toks[0].kind == "directive" and toks[0].text == "define"
    assert "relu" in [t.text for t in toks]
    assert [t.line for t in toks if t.text == "y"] == [3]
