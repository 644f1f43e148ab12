"""Static integrity checks: read a candidate's source and report what it does
that an honest kernel does not. The candidate is never imported or run.

Python is read with the `ast` module. C++/CUDA text (the strings handed to
`load_inline`, or a native `.cu`/`.cpp` file) is read with a small tokenizer
that drops comments and string literals before any name is matched.

The checker only reports findings, each with a stable check id; kforge maps
ids to severities under the strict or any policy (docs/integrity.md).

    python3 -m kforge_harness.static_check --format kernelbench|native|cpp \
        [--allow NAME ...] [--task TASK.py] FILE

prints one JSON object: {"findings": [{"check", "detail", "line"}], "parse_error"}.
"""
from __future__ import annotations

import argparse
import ast
import builtins
import json
import re
import sys
from dataclasses import dataclass

CHECK_IDS = (
    "torch_compute",
    "library_compute",
    "torch_compile",
    "cuda_graph",
    "stream_creation",
    "try_fallback",
    "reference_reuse",
    "tensor_subclass",
    "threading",
    "monkey_patch",
    "ctypes_dlopen",
    "unexpected_import",
    "file_env_network",
    "opaque_code",
    "precision_downcast",
    "missing_modelnew",
    "syntax_error",
)


# Severity of each check under each policy, as docs/integrity.md states it.
# kforge's C++ evaluator owns the mapping; this table mirrors it for the
# tests and for anyone reading this file. "allow" means the finding is dropped.
SEVERITY = {c: {"strict": "reject", "any": "reject"} for c in CHECK_IDS}
SEVERITY["torch_compute"] = {"strict": "reject", "any": "allow"}
SEVERITY["library_compute"] = {"strict": "reject", "any": "allow"}
# Under `any` kforge's device-wide timing counts work on every stream.
SEVERITY["stream_creation"] = {"strict": "reject", "any": "warn"}
SEVERITY["precision_downcast"] = {"strict": "warn", "any": "warn"}


def verdict(findings, policy: str = "strict") -> str:
    """ok / suspect / rejected for a list of finding dicts under a policy."""
    levels = {SEVERITY[f["check"]][policy] for f in findings}
    if "reject" in levels:
        return "rejected"
    if "warn" in levels:
        return "suspect"
    return "ok"


@dataclass(frozen=True, order=True)
class Finding:
    line: int
    check: str
    detail: str

    def to_json(self):
        return {"check": self.check, "detail": self.detail, "line": self.line}


class FindingSet:
    def __init__(self):
        self._items: dict[tuple, Finding] = {}

    def add(self, check: str, detail: str, line) -> None:
        assert check in CHECK_IDS, check
        # One finding per (check, detail): the first place it happens.
        f = Finding(int(line or 0), check, detail)
        old = self._items.get((check, detail))
        if old is None or f.line < old.line:
            self._items[(check, detail)] = f

    def sorted(self) -> list[Finding]:
        return sorted(self._items.values())


class AllowList:
    """Dotted names (`torch.nn.functional.gelu`, `torch.nn.functional`,
    `torch.Tensor.sum`, `numpy`; C++ spellings such as `at::matmul` are
    normalised) that the torch_compute, library_compute and
    unexpected_import checks accept. An entry also allows every name below it."""

    def __init__(self, entries=()):
        self.entries = {e.strip().replace("::", ".").strip(".") for e in entries if e.strip()}

    def allows(self, dotted: str) -> bool:
        return any(dotted == e or dotted.startswith(e + ".") for e in self.entries)

    def allows_cpp(self, qualname: str) -> bool:
        dotted = qualname.replace("::", ".").strip(".")
        root, _, rest = dotted.partition(".")
        forms = {dotted}
        if root in ("at", "torch") and rest:
            forms |= {"at." + rest, "torch." + rest}
        return any(self.allows(f) for f in forms)

    def allows_method(self, name: str) -> bool:
        return self.allows("torch.Tensor." + name) or self.allows("at.Tensor." + name)


# ----------------------------------------------------------------------------
# What counts as what: Python side

# torch calls the strict policy accepts in the forward path.
ALLOWED_TORCH_CALLS = {
    "torch.empty", "torch.empty_like", "torch.empty_strided", "torch.zeros", "torch.zeros_like",
    "torch.tensor",   # constants from Python data, as CUDA Agent's rules allow
    "torch.is_tensor", "torch.numel", "torch.device", "torch.Size", "torch.get_default_dtype",
    "torch.is_floating_point", "torch.is_complex", "torch.is_grad_enabled",
    "torch.is_inference_mode_enabled", "torch.no_grad", "torch.inference_mode", "torch.finfo",
    "torch.iinfo", "torch.nn.Parameter",
    "torch.cuda.current_stream", "torch.cuda.current_device", "torch.cuda.device",
    "torch.cuda.device_count", "torch.cuda.get_device_properties",
    "torch.cuda.get_device_capability", "torch.cuda.get_device_name", "torch.cuda.is_available",
    "torch.cuda.current_blas_handle", "torch.cuda.synchronize",
}
# Tensor methods that only read metadata (result is not a tensor).
TENSOR_META_METHODS = {
    "size", "stride", "numel", "nelement", "dim", "ndimension", "data_ptr", "element_size",
    "is_contiguous", "storage_offset", "get_device", "is_floating_point", "is_complex", "item",
    "tolist", "__len__", "is_pinned", "is_set_to", "has_names",
}
# Tensor methods that allocate or change layout/placement, not values.
TENSOR_LAYOUT_METHODS = {
    "contiguous", "view", "view_as", "reshape", "reshape_as", "detach", "flatten", "unflatten",
    "squeeze", "unsqueeze", "expand", "expand_as", "transpose", "permute", "t", "narrow",
    "as_strided", "unbind", "split", "chunk", "select", "movedim", "to", "cuda", "cpu", "float",
    "new_empty", "new_empty_strided", "new_zeros", "zero_", "requires_grad_", "detach_",
}
TENSOR_ALLOWED_METHODS = TENSOR_META_METHODS | TENSOR_LAYOUT_METHODS
# Tensor attributes that are not methods.
TENSOR_TENSOR_ATTRS = {"T", "mT", "H", "mH", "data", "grad", "real", "imag"}
TENSOR_META_ATTRS = {
    "shape", "dtype", "device", "ndim", "is_cuda", "is_cpu", "requires_grad", "layout",
    "is_leaf", "names", "itemsize", "nbytes", "is_sparse", "is_quantized", "is_meta",
}
PRECISION_METHODS = {"half", "bfloat16"}
# Method names that compute when the receiver is a tensor; used when the receiver's
# type is not known (a known tensor is held to TENSOR_ALLOWED_METHODS instead).
_COMPUTE_BASE = """
abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr all allclose amax amin
aminmax angle any argmax argmin argsort asin asinh atan atan2 atanh baddbmm bernoulli bincount
bitwise_and bitwise_not bitwise_or bitwise_xor bmm cauchy ceil cholesky clamp clamp_max
clamp_min clip clone conv1d conv2d conv3d copy cos cosh count_nonzero cross cummax cummin
cumprod cumsum deg2rad diag diag_embed diagonal diff digamma dist div divide dot einsum eq
equal erf erfc erfinv exp exp2 expm1 exponential fill fill_diagonal fix flip fliplr flipud
float_power floor floor_divide fmax fmin fmod frac gather gcd ge gelu geometric ger gt
hardshrink hardtanh heaviside histc hypot i0 index_add index_copy index_fill index_put
index_reduce index_select inner inverse isclose isfinite isinf isnan isneginf isposinf kron
kthvalue lcm ldexp le lerp lgamma linalg log log10 log1p log2 log_normal log_softmax logaddexp
logaddexp2 logcumsumexp logical_and logical_not logical_or logical_xor logit logsumexp lt
masked_fill masked_scatter masked_select matmul matrix_exp matrix_power max maximum mean
median min minimum mm mode msort mul multinomial multiply mv mvlgamma nan_to_num nanmean
nanmedian nanquantile nansum narrow_copy ne neg negative nextafter nonzero norm normal
outer pinverse polygamma pow prod put quantile rad2deg random reciprocal relu remainder
renorm repeat repeat_interleave roll rot90 round rsqrt scatter scatter_add scatter_reduce
sgn sigmoid sign signbit silu sin sinc sinh slogdet softmax sort sqrt square std sub
subtract sum sum_to_size svd take take_along_dim tan tanh tensordot tile topk trace
tril triu true_divide trunc type_as uniform unique unique_consecutive var vdot where xlogy
double long int bool short byte char type index fill_ copy_ softplus mish hardswish
hardsigmoid elu selu leaky_relu celu glu logsigmoid softsign tanhshrink threshold
"""
COMPUTE_METHODS = set(_COMPUTE_BASE.split())
COMPUTE_METHODS |= {m + "_" for m in list(COMPUTE_METHODS) if not m.endswith("_")}
COMPUTE_METHODS -= TENSOR_ALLOWED_METHODS
# In C++ some of these names collide with ordinary classes (cooperative groups'
# tile.any()/all(), std::array::fill, std::vector's data()).
CPP_COMPUTE_METHODS = COMPUTE_METHODS - {"any", "all", "fill", "copy", "int", "long", "bool",
                                         "short", "char", "double", "type", "random", "index"}
# Python builtins that dispatch to torch when handed tensors.
BUILTIN_MATH = {"sum", "abs", "pow", "min", "max", "round", "divmod"}

MODULE_ALLOWED_IMPORTS = {
    "torch", "math", "typing", "typing_extensions", "__future__", "os", "collections",
    "dataclasses", "enum", "abc", "numbers", "textwrap", "itertools", "functools", "warnings",
}
IMPORT_CHECKS = [
    # (prefix, check id, why)
    ("torch._dynamo", "torch_compile", "TorchDynamo"),
    ("torch._inductor", "torch_compile", "TorchInductor"),
    ("torch.compiler", "torch_compile", "torch.compiler"),
    ("torch.jit", "torch_compile", "TorchScript"),
    ("torch.fx", "torch_compile", "torch.fx graph capture"),
    ("torch.export", "torch_compile", "torch.export"),
    ("torch._export", "torch_compile", "torch.export"),
    ("torch.multiprocessing", "threading", "process pool"),
    ("torch.distributed", "threading", "extra processes"),
    ("torch.overrides", "tensor_subclass", "__torch_function__ overrides"),
    ("torch.utils._python_dispatch", "tensor_subclass", "__torch_dispatch__ modes"),
    ("torch.cuda.graphs", "cuda_graph", "CUDA graphs"),
    ("torch.cuda.amp", "precision_downcast", "autocast"),
    ("torch.amp", "precision_downcast", "autocast"),
    ("torch.cpu.amp", "precision_downcast", "autocast"),
    ("torch.hub", "file_env_network", "downloads"),
    ("threading", "threading", "threads"),
    ("_thread", "threading", "threads"),
    ("multiprocessing", "threading", "processes"),
    ("concurrent", "threading", "thread/process pools"),
    ("asyncio", "threading", "event loop"),
    ("joblib", "threading", "process pools"),
    ("ctypes", "ctypes_dlopen", "foreign function interface"),
    ("_ctypes", "ctypes_dlopen", "foreign function interface"),
    ("cffi", "ctypes_dlopen", "foreign function interface"),
    ("importlib", "ctypes_dlopen", "dynamic module loading"),
    ("imp", "ctypes_dlopen", "dynamic module loading"),
    ("runpy", "ctypes_dlopen", "dynamic module loading"),
    ("zipimport", "ctypes_dlopen", "dynamic module loading"),
    ("pkgutil", "ctypes_dlopen", "dynamic module loading"),
    ("__main__", "reference_reuse", "the main module holds the harness and reference"),
]
FILE_ENV_NET_MODULES = {
    "subprocess", "socket", "ssl", "urllib", "urllib3", "http", "requests", "httpx", "aiohttp",
    "ftplib", "smtplib", "telnetlib", "pathlib", "shutil", "tempfile", "glob", "io", "pickle",
    "shelve", "marshal", "sqlite3", "fcntl", "mmap", "pty", "select", "selectors", "webbrowser",
    "xmlrpc", "zipfile", "tarfile", "gzip", "bz2", "lzma", "fileinput", "filecmp", "linecache",
    "dbm", "signal", "resource", "pwd", "grp", "platform", "getpass", "uuid",
}
# os.* that touch neither files, environment, processes nor the network.
OS_ALLOWED = {"os.path.join", "os.path.dirname", "os.path.basename", "os.path.splitext",
              "os.path.normpath", "os.sep", "os.path.sep", "os.cpu_count", "os.linesep",
              "os.name", "os.path"}
OS_PROCESS = {"fork", "forkpty", "posix_spawn", "posix_spawnp", "spawnl", "spawnle", "spawnlp",
              "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "register_at_fork"}

COMPILE_PATHS = ["torch.compile", "torch._dynamo", "torch._inductor", "torch.compiler",
                 "torch.jit", "torch.fx", "torch.export", "torch._export",
                 "torch.nn.Module.compile"]
# The one quoted include a native candidate may have (docs/candidate-formats.md).
NATIVE_ABI_HEADER = "kforge_native.h"

GRAPH_PATHS = ["torch.cuda.CUDAGraph", "torch.cuda.graph", "torch.cuda.graphs",
               "torch.cuda.make_graphed_callables", "torch.cuda.graph_pool_handle"]
# Calls that return a stream object (whose class can make new streams).
STREAM_RETURNING = ["torch.cuda.current_stream", "torch.cuda.default_stream",
                    "torch.cuda.Stream", "torch.cuda.ExternalStream", "torch.cuda.streams",
                    "torch.Stream", "torch.accelerator.current_stream"]
STREAM_PATHS = ["torch.cuda.Stream", "torch.cuda.ExternalStream", "torch.cuda.stream",
                "torch.cuda.set_stream", "torch.cuda.StreamContext", "torch.Stream",
                "torch.cuda.streams", "torch.cpu.Stream", "torch.cpu.stream"]
THREAD_PATHS = ["torch.set_num_threads", "torch.set_num_interop_threads",
                "torch.multiprocessing", "torch.distributed"]
GLOBAL_SETTERS = [
    "torch.set_default_dtype", "torch.set_default_tensor_type", "torch.set_default_device",
    "torch.manual_seed", "torch.seed", "torch.random", "torch.set_rng_state",
    "torch.cuda.manual_seed", "torch.cuda.manual_seed_all", "torch.cuda.set_rng_state",
    "torch.cuda.set_rng_state_all", "torch.cuda.seed", "torch.cuda.seed_all",
    "torch.use_deterministic_algorithms", "torch.set_deterministic_debug_mode",
    "torch.set_flush_denormal", "torch.set_float32_matmul_precision", "torch.set_grad_enabled",
    "torch.cuda.set_device", "torch.cuda.set_per_process_memory_fraction",
    "torch.cuda.set_sync_debug_mode", "torch.cuda.memory.set_per_process_memory_fraction",
    "torch.backends", "torch.set_warn_always",
]
FFI_PATHS = ["torch.ops.load_library", "torch.classes.load_library", "torch.cuda.cudart",
             "torch.utils.cpp_extension.load_library"]
FILE_PATHS = ["torch.load", "torch.save", "torch.hub", "torch.from_file",
              "torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline_sources"]
SUBCLASS_PATHS = ["torch.overrides", "torch.utils._python_dispatch", "torch.Tensor._make_subclass",
                  "torch.Tensor._make_wrapper_subclass", "torch.Tensor.as_subclass",
                  "torch.Tensor.__torch_function__", "torch.Tensor.__torch_dispatch__"]
PRECISION_PATHS = ["torch.float16", "torch.half", "torch.bfloat16", "torch.float8_e4m3fn",
                   "torch.float8_e5m2", "torch.float8_e4m3fnuz", "torch.float8_e5m2fnuz",
                   "torch.complex32", "torch.chalf", "torch.autocast", "torch.cuda.amp",
                   "torch.amp", "torch.cpu.amp", "torch.cuda.HalfTensor",
                   "torch.cuda.BFloat16Tensor", "torch.HalfTensor", "torch.BFloat16Tensor"]
PRECISION_FLAGS_ATTRS = {"allow_tf32", "allow_fp16_reduced_precision_reduction",
                         "allow_bf16_reduced_precision_reduction", "fp32_precision"}
REFERENCE_INTROSPECTION = ["gc.get_objects", "gc.get_referrers", "gc.get_referents",
                           "inspect.stack", "inspect.currentframe", "inspect.getouterframes",
                           "inspect.getsource", "sys._getframe", "sys._current_frames",
                           "sys.modules", "traceback.extract_stack", "traceback.walk_stack"]
ATEN_OP_NAMESPACES = {"aten", "prims", "prim", "quantized", "_quantized", "mkldnn",
                      "torchvision", "_c10d_functional", "c10d", "profiler", "inductor"}
DANGEROUS_BUILTINS = {
    "eval": ("opaque_code", "eval() runs code the checks cannot read"),
    "exec": ("opaque_code", "exec() runs code the checks cannot read"),
    "compile": ("opaque_code", "compile() builds code the checks cannot read"),
    "__import__": ("opaque_code", "__import__() loads modules by computed name"),
    "globals": ("opaque_code", "globals() reaches names by computed key"),
    "locals": ("opaque_code", "locals() reaches names by computed key"),
    "vars": ("opaque_code", "vars() reaches attributes by computed key"),
    "breakpoint": ("opaque_code", "breakpoint() hands control to a debugger"),
    "open": ("file_env_network", "open() touches the file system"),
    "input": ("file_env_network", "input() reads from stdin"),
    "__builtins__": ("opaque_code", "__builtins__ reaches builtins by computed key"),
}
INTROSPECTION_ATTRS = {"__globals__", "__builtins__", "__subclasses__", "__code__",
                       "__closure__", "__bases__", "__mro__", "__loader__", "__spec__",
                       "__getattribute__", "f_back", "f_globals", "f_locals", "gi_frame",
                       "tb_frame", "__reduce__", "__reduce_ex__"}
# torch attributes that are values (dtypes, layouts, constants, submodules), not functions.
TORCH_VALUE_NAMES = set("""
float float32 float64 double half float16 bfloat16 int int8 int16 int32 int64 long short uint8
uint16 uint32 uint64 bool complex64 complex128 cfloat cdouble chalf strided sparse_coo sparse_csr
channels_last channels_last_3d contiguous_format preserve_format inf nan pi e newaxis nn cuda
backends utils ops testing distributions autograd linalg fft special sparse version cpu mps
float8_e4m3fn float8_e5m2 qint8 quint8 qint32 jit onnx library
""".split())
NN_PARAM_ATTRS = {"weight", "bias", "running_mean", "running_var", "in_proj_weight",
                  "in_proj_bias", "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"}

# Torch names that have their own check id; calling them is not also torch_compute.
OWNED_BY_OTHER_CHECKS = (COMPILE_PATHS + GRAPH_PATHS + STREAM_PATHS + THREAD_PATHS +
                         GLOBAL_SETTERS + FFI_PATHS + FILE_PATHS + SUBCLASS_PATHS)

LOAD_INLINE = "torch.utils.cpp_extension.load_inline"
LOAD_INLINE_POSITIONAL = ["name", "cpp_sources", "cuda_sources", "sycl_sources", "functions",
                          "extra_cflags", "extra_cuda_cflags", "extra_sycl_cflags",
                          "extra_ldflags", "extra_include_paths", "build_directory"]
LINKABLE_LIBS = {"cublas", "cublasLt", "cudnn", "cudart", "cuda", "c10", "c10_cuda", "torch",
                 "torch_cpu", "torch_cuda", "torch_python", "gomp", "omp", "iomp5", "m",
                 "stdc++", "cufft", "cusparse", "curand", "cusolver", "nvToolsExt"}
FAST_MATH_FLAGS = {"--use_fast_math", "-use_fast_math", "--ftz=true", "-ftz=true",
                   "--prec-div=false", "-prec-div=false", "--prec-sqrt=false",
                   "-prec-sqrt=false", "-ffast-math", "-Ofast", "-funsafe-math-optimizations",
                   "-ffinite-math-only", "-fno-signed-zeros", "-freciprocal-math"}
HEADER_INJECT_FLAGS = ("-include", "-imacros", "--pre-include", "-I", "-isystem",
                       "--include-path", "-iquote", "-idirafter", "--system-include")


def path_matches(path: str, prefixes) -> str | None:
    """The first prefix that is `path` or a dotted parent of it."""
    for p in prefixes:
        if path == p or path.startswith(p + "."):
            return p
    return None


def is_private_torch(path: str) -> bool:
    parts = path.split(".")
    return parts[0] == "torch" and any(
        p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in parts[1:])


def classify_module_import(mod: str, allow: AllowList):
    """(check, detail) for an imported module path, or None when it is fine."""
    if allow.allows(mod):
        return None
    for prefix, check, why in IMPORT_CHECKS:
        if mod == prefix or mod.startswith(prefix + "."):
            return check, f"imports {mod} ({why})"
    root = mod.split(".")[0]
    if root in FILE_ENV_NET_MODULES:
        return "file_env_network", f"imports {mod} (file, process or network access)"
    if root == "torch":
        if is_private_torch(mod):
            return "opaque_code", f"imports private torch internals {mod}"
        return None
    if root in MODULE_ALLOWED_IMPORTS:
        return None
    return "unexpected_import", f"imports {mod}, which is not on the import allowlist"


# ----------------------------------------------------------------------------
# C++/CUDA tokenizer and scanner


@dataclass
class Tok:
    kind: str   # ident, number, punct, string, char, directive
    text: str
    line: int
    extra: str = ""   # directive: its argument text


_PUNCT3 = ("<<=", ">>=", "...", "->*", "<=>")
_PUNCT2 = ("::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=",
           "*=", "/=", "%=", "&=", "|=", "^=", "##", ".*")
_STR_PREFIX = re.compile(r'(?:u8|u|U|L)?R?"|(?:u8|u|U|L)?\'')


def cpp_tokenize(src: str) -> list[Tok]:
    """Tokens of C/C++/CUDA source with comments removed and string/char
    literals kept as opaque tokens. Preprocessor lines give a `directive`
    token (name in text, the rest in extra); the rest of a #define or #if
    line is tokenized as ordinary code so macro bodies are scanned too."""
    toks: list[Tok] = []
    i, n, line = 0, len(src), 1
    at_line_start = True
    in_directive = False

    def add(kind, text, ln, extra=""):
        toks.append(Tok(kind, text, ln, extra))

    while i < n:
        c = src[i]
        if c == "\\" and i + 1 < n and src[i + 1] == "\n":   # line continuation
            i += 2
            line += 1
            continue
        if c == "\n":
            line += 1
            i += 1
            at_line_start = True
            if in_directive:
                in_directive = False
                add("punct", "<eol>", line - 1)
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if src.startswith("//", i):
            while i < n and src[i] != "\n":
                if src[i] == "\\" and i + 1 < n and src[i + 1] == "\n":
                    line += 1
                    i += 1
                i += 1
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += src.count("\n", i, j)
            i = j
            continue
        if c == "#" and at_line_start and not src.startswith("##", i):
            at_line_start = False
            j = i + 1
            while j < n and src[j] in " \t":
                j += 1
            k = j
            while k < n and (src[k].isalnum() or src[k] == "_"):
                k += 1
            name = src[j:k]
            # logical line text (continuations joined, comments dropped roughly)
            e = k
            while e < n and src[e] != "\n":
                if src[e] == "\\" and e + 1 < n and src[e + 1] == "\n":
                    e += 2
                    continue
                if src.startswith("//", e) or src.startswith("/*", e):
                    break
                e += 1
            rest = src[k:e].replace("\\\n", " ").strip()
            add("directive", name, line, rest)
            if name in ("include", "include_next", "import", "pragma", "error", "warning",
                        "line"):
                # skip to end of logical line (keep line count right)
                while i < n and src[i] != "\n":
                    if src[i] == "\\" and i + 1 < n and src[i + 1] == "\n":
                        line += 1
                        i += 1
                    elif src.startswith("/*", i):
                        j2 = src.find("*/", i + 2)
                        j2 = n if j2 < 0 else j2 + 2
                        line += src.count("\n", i, j2)
                        i = j2
                        continue
                    i += 1
            else:
                in_directive = True
                i = k
            continue
        at_line_start = False
        m = _STR_PREFIX.match(src, i) if (c in "uULR\"'") else None
        if m and (c in "\"'" or not (i > 0 and (src[i - 1].isalnum() or src[i - 1] == "_"))):
            pre = m.group(0)
            j = i + len(pre)
            if pre.endswith('R"'):
                k = src.find("(", j)
                delim = src[j:k] if k >= 0 else ""
                end = src.find(")" + delim + '"', k + 1) if k >= 0 else -1
                end = n if end < 0 else end + len(delim) + 2
                text = src[k + 1:end - len(delim) - 2] if k >= 0 else ""
                add("string", text, line)
                line += src.count("\n", i, end)
                i = end
                continue
            quote = pre[-1]
            k = j
            while k < n and src[k] != quote and src[k] != "\n":
                k += 2 if src[k] == "\\" else 1
            add("string" if quote == '"' else "char", src[j:k], line)
            i = min(k + 1, n)
            continue
        if c.isalpha() or c == "_" or c == "$":
            j = i + 1
            while j < n and (src[j].isalnum() or src[j] in "_$"):
                j += 1
            add("ident", src[i:j], line)
            i = j
            continue
        if c.isdigit() or (c == "." and i + 1 < n and src[i + 1].isdigit()):
            j = i + 1
            while j < n:
                d = src[j]
                if d.isalnum() or d in "._" or (d == "'" and j + 1 < n and src[j + 1].isalnum()):
                    j += 1
                elif d in "+-" and src[j - 1] in "eEpP" and not src[i:j].startswith(("0x", "0X")) \
                        or d in "+-" and src[j - 1] in "pP":
                    j += 1
                else:
                    break
            add("number", src[i:j], line)
            i = j
            continue
        for p in _PUNCT3 + _PUNCT2:
            if src.startswith(p, i):
                add("punct", p, line)
                i += len(p)
                break
        else:
            add("punct", c, line)
            i += 1
    if in_directive:
        add("punct", "<eol>", line)
    return toks


# Headers an honest kernel may include.
_STD_HEADERS = set("""
algorithm any array atomic bit bitset cassert cctype cerrno cfenv cfloat charconv chrono cinttypes
climits clocale cmath codecvt compare complex concepts cstdarg cstddef cstdint cstdio cstdlib
cstring ctime cuchar cwchar cwctype deque exception execution expected forward_list functional
initializer_list iomanip ios iosfwd iostream istream iterator limits list locale map memory
memory_resource new numbers numeric optional ostream queue random ranges ratio regex
scoped_allocator set shared_mutex source_location span sstream stack stdexcept streambuf string
string_view system_error tuple type_traits typeindex typeinfo unordered_map unordered_set utility
valarray variant vector version mutex barrier latch semaphore stop_token stacktrace format
assert.h ctype.h errno.h fenv.h float.h inttypes.h limits.h locale.h math.h stdarg.h stdbool.h
stddef.h stdint.h stdio.h stdlib.h string.h time.h uchar.h wchar.h wctype.h alloca.h malloc.h
cuda.h cuda_runtime.h cuda_runtime_api.h device_launch_parameters.h cuda_fp16.h cuda_fp16.hpp
cuda_bf16.h cuda_bf16.hpp cuda_fp8.h cuda_fp8.hpp mma.h cooperative_groups.h cuda_pipeline.h
cuda_pipeline_primitives.h cuda_awbarrier.h cuda_awbarrier_primitives.h cublas_v2.h cublas.h
cublasLt.h cublas_api.h cudnn.h curand_kernel.h curand.h cufft.h cusparse.h cusolverDn.h
math_constants.h vector_types.h vector_functions.h device_functions.h driver_types.h
host_defines.h cuda_texture_types.h texture_fetch_functions.h sm_20_intrinsics.h
sm_30_intrinsics.h sm_32_intrinsics.h sm_35_intrinsics.h sm_60_atomic_functions.h
sm_61_intrinsics.h crt/host_defines.h nvToolsExt.h cuda_occupancy.h builtin_types.h
library_types.h Python.h omp.h immintrin.h x86intrin.h xmmintrin.h emmintrin.h pmmintrin.h
tmmintrin.h smmintrin.h nmmintrin.h avxintrin.h avx2intrin.h arm_neon.h
""".split())
_HEADER_PREFIXES = ("torch/", "ATen/", "c10/", "pybind11/", "cooperative_groups/", "cuda/",
                    "cub/", "thrust/", "cudnn_", "cublas", "crt/", "nvtx3/", "cute/",
                    "cutlass/", "sm_", "cusparse", "cufft", "curand", "cusolver")
_TORCH_HEADER_PREFIXES = ("torch/", "ATen/", "c10/", "pybind11/", "Python.h")
_HEADER_CHECKS = {
    "dlfcn.h": ("ctypes_dlopen", "dynamic loading"),
    "thread": ("threading", "threads"), "future": ("threading", "async tasks"),
    "pthread.h": ("threading", "POSIX threads"), "threads.h": ("threading", "C11 threads"),
    "fstream": ("file_env_network", "file streams"),
    "filesystem": ("file_env_network", "file system"),
    "unistd.h": ("file_env_network", "POSIX process/file API"),
    "fcntl.h": ("file_env_network", "file descriptors"),
    "netdb.h": ("file_env_network", "network"),
    "spawn.h": ("file_env_network", "process spawning"),
    "dirent.h": ("file_env_network", "directories"),
}
_HEADER_CHECK_PREFIXES = {"sys/": ("file_env_network", "system calls"),
                          "netinet/": ("file_env_network", "network"),
                          "arpa/": ("file_env_network", "network")}

CPP_ALLOWED_TORCH_FUNCS = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "from_blob", "parallel_for",
    "parallel_reduce", "get_num_threads", "get_thread_num", "in_parallel_region",
    "get_num_interop_threads", "lazy_init_num_threads", "getCurrentCUDAStream",
    "getDefaultCUDAStream", "getCurrentCUDABlasHandle", "getCurrentCUDABlasLtHandle",
    "getCurrentCUDASparseHandle", "getCurrentCUDASolverDnHandle", "getCurrentDeviceProperties",
    "getDeviceProperties", "current_device", "device_count", "getNumGPUs", "is_available",
    "dtype", "device", "layout", "requires_grad", "memory_format", "pinned_memory", "irange",
    "elementSize", "toString", "isFloatingType", "isComplexType", "isIntegralType",
    "typeMetaToScalarType", "scalarTypeToTypeMeta", "globalContext", "warp_size",
    "check", "kernelLaunchCheck", "maybe_wrap_dim", "numel", "cuda", "device_of", "acc_type",
    "opmath_type", "ceil_div", "divup", "elementSize", "getCurrentCUDAStream",
}
CPP_STREAM_IDENTS = {
    "cudaStreamCreate", "cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority",
    "cuStreamCreate", "cuStreamCreateWithPriority", "cudaStreamPerThread", "cudaStreamLegacy",
    "cudaStreamNonBlocking", "CU_STREAM_PER_THREAD", "CU_STREAM_LEGACY", "CU_STREAM_NON_BLOCKING",
    "getStreamFromPool", "getStreamFromExternal", "setCurrentCUDAStream", "CUDAStreamGuard",
    "OptionalCUDAStreamGuard", "CUDAMultiStreamGuard", "cudaLaunchHostFunc",
    "cudaStreamAddCallback", "cudaStreamGetCaptureInfo",
}
CPP_GRAPH_IDENTS = {"cudaStreamBeginCapture", "cudaStreamEndCapture", "CUDAGraph",
                    "cudaStreamBeginCaptureToGraph", "cuStreamBeginCapture", "cuStreamEndCapture",
                    "cudaThreadExchangeStreamCaptureMode"}
CPP_FFI_IDENTS = {"dlopen", "dlsym", "dlmopen", "dlvsym", "LoadLibrary", "LoadLibraryA",
                  "LoadLibraryW", "LoadLibraryExA", "LoadLibraryExW", "GetProcAddress",
                  "cuGetProcAddress", "cuGetProcAddress_v2", "cudaGetDriverEntryPoint",
                  "cudaGetDriverEntryPointByVersion"}
CPP_FILE_CALLS = {"fopen", "fopen64", "freopen", "fdopen", "open", "open64", "openat", "creat",
                  "getenv", "secure_getenv", "setenv", "putenv", "unsetenv", "clearenv",
                  "system", "popen", "execl", "execle", "execlp", "execv", "execve", "execvp",
                  "execvpe", "fork", "vfork", "posix_spawn", "posix_spawnp", "socket",
                  "connect", "listen", "accept", "gethostbyname", "getaddrinfo", "unlink",
                  "mkdir", "rmdir", "chdir", "readlink", "opendir", "mkstemp", "tmpfile"}
CPP_FILE_ANY = {"ifstream", "ofstream", "fstream", "filebuf", "wifstream", "wofstream",
                "environ", "filesystem", "curl_easy_init", "curl_easy_perform"}
CPP_THREAD_ANY = {"jthread", "thrd_create", "CreateThread", "omp_set_num_threads",
                  "omp_set_dynamic", "omp_set_max_active_levels", "set_num_threads",
                  "set_num_interop_threads", "pthread_create", "pthread_join", "pthread_detach"}
CPP_STD_THREAD = {"thread", "async", "jthread", "packaged_task", "execution"}
CPP_MONKEY_IDENTS = {"cudaLimitPersistingL2CacheSize", "accessPolicyWindow",
                     "cudaStreamAttributeAccessPolicyWindow", "cudaAccessPropertyPersisting",
                     "cudaKernelNodeAttributeAccessPolicyWindow", "cudaDeviceSetLimit",
                     "cudaDeviceReset", "cudaSetDevice", "cudaDeviceSetCacheConfig",
                     "cudaDeviceSetSharedMemConfig", "cudaCtxResetPersistingL2Cache",
                     "cuCtxSetLimit", "cudaSetDeviceFlags"}
CPP_GLOBAL_SETTER = re.compile(
    r"^set(Allow\w+|Benchmark\w*|Deterministic\w*|Float32MatmulPrecision|UserEnabled\w+|"
    r"SDPUse\w+|FloatMatmulPrecision|BlasPreferredBackend|LinalgPreferredBackend)$")
CPP_OPAQUE_IDENTS = {"PyRun_SimpleString", "PyRun_String", "PyRun_SimpleStringFlags",
                     "PyImport_ImportModule", "PyImport_Import", "PyImport_ImportModuleLevel",
                     "PyEval_EvalCode", "PyObject_CallMethod", "PyObject_GetAttrString",
                     "Py_CompileString"}
CPP_PRECISION_IDENTS = {
    "__half", "__half2", "__nv_bfloat16", "__nv_bfloat162", "nv_bfloat16", "nv_bfloat162",
    "half2", "__nv_fp8_e4m3", "__nv_fp8_e5m2", "Half", "BFloat16", "kHalf", "kBFloat16",
    "kFloat16", "kFloat8_e4m3fn", "kFloat8_e5m2", "CUDA_R_16F", "CUDA_R_16BF", "CUDA_R_8F_E4M3",
    "CUDA_R_8F_E5M2", "CUBLAS_COMPUTE_16F", "CUBLAS_COMPUTE_32F_FAST_16F",
    "CUBLAS_COMPUTE_32F_FAST_16BF", "CUBLAS_COMPUTE_32F_FAST_TF32", "CUBLAS_TF32_TENSOR_OP_MATH",
    "CUBLAS_TENSOR_OP_MATH", "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION", "CUDNN_DATA_HALF",
    "CUDNN_DATA_BFLOAT16", "tf32", "__float_to_tf32", "cublasHgemm", "cublasHgemmBatched",
    "cublasHgemmStridedBatched", "CUBLASLT_COMPUTE_32F_FAST_TF32",
}
_CPP_PRECISION_PREFIX = re.compile(r"^(__float2half|__half2float|__float2bfloat16|__bfloat162float"
                                   r"|__floats2half2|__floats2bfloat162|__h(add|sub|mul|div|fma|"
                                   r"max|min|exp|log|sqrt|rcp|neg|abs)|__half2|__float22half2|"
                                   r"__float_to_tf32|__nv_cvt)")
_PTX_LOWP = re.compile(r"\.(f16|bf16|tf32|e4m3|e5m2)(x2)?\b")
_CUBLAS_LEVEL1 = re.compile(r"^(?:[sdczh]|cs|zd|sc|dz|i[sdcz]|i)?(?:asum|axpy|copy|dot[cu]?|nrm2|"
                            r"rotg?|rotmg?|scal|swap|amax|amin|geam|dgmm|tpttr|trttp)(?:ex)?"
                            r"(?:_v2)?(?:_64)?$")
TORCH_FREE_FUNCS = set("""
matmul mm bmm addmm addmv baddbmm einsum relu relu_ gelu sigmoid tanh softmax log_softmax
sum mean max min amax amin argmax argmin exp log sqrt rsqrt pow abs clamp where conv1d conv2d
conv3d conv_transpose1d conv_transpose2d conv_transpose3d linear layer_norm batch_norm
group_norm instance_norm dropout embedding mse_loss cross_entropy nll_loss smooth_l1_loss
l1_loss binary_cross_entropy kl_div cosine_similarity pairwise_distance cumsum cumprod prod
norm var std sort topk add sub mul div neg reciprocal maximum minimum max_pool1d max_pool2d
max_pool3d avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool2d silu hardtanh elu selu
leaky_relu softplus logsumexp tril triu transpose_copy cat stack index_select gather scatter
masked_fill addcmul addcdiv lerp erf sin cos floor ceil round sign
""".split())


def _pair_end(toks, i, open_p, close_p):
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind == "punct" and t.text == open_p:
            depth += 1
        elif t.kind == "punct" and t.text == close_p:
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


class CppScanner:
    """Scans one C++/CUDA translation unit's tokens for the integrity checks."""

    def __init__(self, findings: FindingSet, allow: AllowList, native: bool,
                 line_map=None, where: str = ""):
        self.f = findings
        self.allow = allow
        self.native = native
        self.line_map = line_map or (lambda ln: ln)
        self.where = where

    def add(self, check, detail, line):
        self.f.add(check, detail + (f" [{self.where}]" if self.where else ""), self.line_map(line))

    def scan(self, src: str, precision: bool = True) -> None:
        toks = cpp_tokenize(src)
        self.precision = precision
        self._includes(toks)
        ns_alias, using_ns, using_names = self._namespaces(toks)
        self._names(toks, ns_alias, using_ns, using_names)
        self._tensor_operators(toks)
        self._catch_blocks(toks)

    # -- preprocessor ------------------------------------------------------
    def _includes(self, toks):
        for t in toks:
            if t.kind != "directive":
                if t.kind == "punct" and t.text == "##":
                    self.add("opaque_code", "token pasting (##) builds identifiers the "
                             "checks cannot read", t.line)
                if t.kind == "string" and self.precision and _PTX_LOWP.search(t.text) \
                        and ("mma" in t.text or "cvt" in t.text or "wgmma" in t.text):
                    self.add("precision_downcast", "inline PTX works in a reduced precision "
                             f"({_PTX_LOWP.search(t.text).group(0)})", t.line)
                continue
            if t.text in ("include", "include_next", "import"):
                self._include(t)
            elif t.text == "pragma" and re.match(r"^(comment|GCC\s+push_options|GCC\s+optimize)",
                                                t.extra):
                if "fast-math" in t.extra or "Ofast" in t.extra:
                    if self.precision:
                        self.add("precision_downcast", f"#pragma {t.extra}", t.line)

    def _include(self, t):
        arg = t.extra.strip()
        if arg.startswith("<") and ">" in arg:
            hdr, quoted = arg[1:arg.index(">")].strip(), False
        elif arg.startswith('"'):
            hdr, quoted = arg[1:].split('"')[0].strip(), True
        else:
            self.add("opaque_code", f"#include of a macro-computed header ({arg})", t.line)
            return
        if self.native and quoted and hdr == NATIVE_ABI_HEADER:
            return  # the ABI header kforge writes next to the source it builds
        if quoted or hdr.startswith("/") or ".." in hdr:
            self.add("unexpected_import", f'#include "{hdr}" reads a file outside the candidate',
                     t.line)
            return
        if hdr in _HEADER_CHECKS:
            check, why = _HEADER_CHECKS[hdr]
            self.add(check, f"#include <{hdr}> ({why})", t.line)
            return
        for p, (check, why) in _HEADER_CHECK_PREFIXES.items():
            if hdr.startswith(p):
                self.add(check, f"#include <{hdr}> ({why})", t.line)
                return
        if self.native and hdr.startswith(_TORCH_HEADER_PREFIXES):
            self.add("unexpected_import", f"#include <{hdr}>: native candidates must not use "
                     "PyTorch headers", t.line)
            return
        if hdr in _STD_HEADERS or hdr.startswith(_HEADER_PREFIXES):
            return
        if self.allow.allows(hdr):
            return
        self.add("unexpected_import", f"#include <{hdr}> is not on the header allowlist", t.line)

    # -- namespaces ----------------------------------------------------------
    def _namespaces(self, toks):
        ns_alias, using_ns, using_names = {}, set(), {}
        for i, t in enumerate(toks):
            if t.kind != "ident":
                continue
            if t.text == "namespace" and i + 3 < len(toks) and toks[i + 1].kind == "ident" \
                    and toks[i + 2].text == "=":
                name, j, parts = toks[i + 1].text, i + 3, []
                while j < len(toks) and toks[j].text != ";":
                    if toks[j].kind == "ident":
                        parts.append(toks[j].text)
                    j += 1
                ns_alias[name] = "::".join(parts)
            elif t.text == "using" and i + 1 < len(toks):
                j, parts = i + 1, []
                is_ns = toks[j].text == "namespace"
                if is_ns:
                    j += 1
                while j < len(toks) and toks[j].text not in (";", "="):
                    if toks[j].kind == "ident":
                        parts.append(toks[j].text)
                    j += 1
                if j < len(toks) and toks[j].text == "=":
                    continue
                if not parts:
                    continue
                if parts[0] in ns_alias:
                    parts = ns_alias[parts[0]].split("::") + parts[1:]
                if is_ns:
                    using_ns.add("::".join(parts))
                elif len(parts) > 1:
                    using_names[parts[-1]] = "::".join(parts)
        return ns_alias, using_ns, using_names

    # -- names ----------------------------------------------------------------
    def _names(self, toks, ns_alias, using_ns, using_names):
        torch_ns = {ns for ns in using_ns if ns.split("::")[0] in ("torch", "at")}
        n = len(toks)
        i = 0
        while i < n:
            t = toks[i]
            if t.kind != "ident":
                i += 1
                continue
            # collect a qualified name a::b::c (leading :: allowed)
            parts = [t.text]
            j = i + 1
            while j + 1 < n and toks[j].text == "::" and toks[j + 1].kind == "ident":
                parts.append(toks[j + 1].text)
                j += 2
            prev = toks[i - 1] if i > 0 else None
            prev_qual = prev is not None and prev.text == "::"
            member = prev is not None and prev.text in (".", "->")
            nxt = toks[j] if j < n else None
            if parts[0] in ns_alias and not member and not prev_qual:
                parts = ns_alias[parts[0]].split("::") + parts[1:]
            qual = "::".join(parts)
            call = nxt is not None and nxt.text == "("
            self._check_ident(parts, qual, t.line, member, prev_qual, call, nxt, toks, i, j,
                              torch_ns, using_names)
            i = j

    def _check_ident(self, parts, qual, line, member, prev_qual, call, nxt, toks, i, j,
                     torch_ns, using_names):
        last = parts[-1]
        root = parts[0]
        # Every identifier in the qualified name, for identifier-level rules.
        for p in parts:
            self._ident_rules(p, qual, line, member, call if p is last else False, parts)
        if member:
            if len(parts) == 1 and call:
                if last in CPP_COMPUTE_METHODS and not self.allow.allows_method(last):
                    self.add("torch_compute", f"tensor method .{last}() computes with ATen",
                             line)
                elif last in ("half", "bfloat16") and self.precision:
                    self.add("precision_downcast", f".{last}() casts to a reduced precision",
                             line)
            return
        if prev_qual:
            return
        if root in ("torch", "at", "c10", "caffe2") and len(parts) > 1:
            self._torch_name(parts, qual, line, call, nxt)
            return
        if len(parts) == 1 and call and last in TORCH_FREE_FUNCS:
            src = using_names.get(last)
            if (src and src.split("::")[0] in ("torch", "at")) or (torch_ns and not src):
                if not self.allow.allows_cpp((src or "at::" + last)):
                    self.add("torch_compute", f"{last}() resolves to a torch/ATen operator "
                             f"through a using-declaration", line)
        if root in ("TORCH_LIBRARY_IMPL", "TORCH_LIBRARY", "TORCH_LIBRARY_FRAGMENT") and call:
            k = j + 1
            if k < len(toks) and toks[k].kind == "ident" and toks[k].text in ATEN_OP_NAMESPACES:
                self.add("monkey_patch", f"{root}({toks[k].text}, ...) overrides PyTorch's own "
                         "operators", line)
        if root == "thrust" and len(parts) > 1 and call and last[:1].islower() and last not in (
                "raw_pointer_cast", "device_pointer_cast", "make_tuple", "make_pair", "get",
                "make_zip_iterator", "make_transform_iterator", "make_counting_iterator",
                "make_constant_iterator", "make_permutation_iterator", "device_malloc",
                "device_free", "tie"):
            if not self.allow.allows_cpp(qual):
                self.add("library_compute", f"{qual}() runs a Thrust library algorithm", line)
        if root == "cub" and any(p.startswith("Device") for p in parts[1:]):
            if not self.allow.allows_cpp(qual):
                self.add("library_compute", f"{qual} runs a CUB device-wide algorithm", line)
        if root in ("py", "pybind11") and last in ("import", "eval", "exec", "eval_file"):
            self.add("opaque_code", f"{qual} runs Python from C++", line)
        if root == "std" and len(parts) > 1:
            if parts[1] in CPP_STD_THREAD or parts[1] == "this_thread" and last == "sleep_for":
                self.add("threading", f"{qual} starts or manages threads", line)
            if parts[1] in CPP_FILE_CALLS and call or parts[1] in CPP_FILE_ANY:
                self.add("file_env_network", f"{qual} touches files, environment, processes or "
                         "the network", line)

    def _ident_rules(self, name, qual, line, member, call, parts):
        if name in CPP_STREAM_IDENTS:
            self.add("stream_creation", f"{name}: work on a stream other than the current one",
                     line)
        if name in CPP_GRAPH_IDENTS or name.startswith(("cudaGraph", "cuGraph")):
            self.add("cuda_graph", f"{name}: CUDA graph capture or launch", line)
        if name in CPP_FFI_IDENTS:
            self.add("ctypes_dlopen", f"{name}: loads code at run time", line)
        if name in CPP_THREAD_ANY or name.startswith("pthread_"):
            self.add("threading", f"{name}: starts or manages threads", line)
        if name in CPP_MONKEY_IDENTS or (member and call and CPP_GLOBAL_SETTER.match(name)):
            self.add("monkey_patch", f"{name}: changes process- or device-wide state", line)
        if name in CPP_OPAQUE_IDENTS:
            self.add("opaque_code", f"{name}: runs Python from C++", line)
        if name in ("Dispatcher", "findSchemaOrThrow", "callBoxed", "redispatch") and not member:
            self.add("torch_compute", f"{name}: calls ATen operators through the dispatcher",
                     line)
        if not member and len(parts) == 1:
            if name in CPP_FILE_CALLS and call or name in CPP_FILE_ANY:
                self.add("file_env_network", f"{name}: touches files, environment, processes "
                         "or the network", line)
        if self.precision and (name in CPP_PRECISION_IDENTS
                               and not (name in ("Half", "BFloat16") and len(parts) == 1)
                               or _CPP_PRECISION_PREFIX.match(name)):
            self.add("precision_downcast", f"{name}: reduced precision arithmetic", line)
        if name.startswith("cublas") and not self.allow.allows_cpp(name):
            if _CUBLAS_LEVEL1.match(name[len("cublas"):].lower()):
                self.add("library_compute", f"{name}: cuBLAS outside matrix products", line)
        if name.startswith("cudnn") and not name.startswith(
                ("cudnnGet", "cudnnSet", "cudnnCreate", "cudnnDestroy", "cudnnFind")):
            if ("Forward" in name or "Backward" in name or name in (
                    "cudnnOpTensor", "cudnnReduceTensor", "cudnnScaleTensor",
                    "cudnnTransformTensor")) and "Convolution" not in name \
                    and not self.allow.allows_cpp(name):
                self.add("library_compute", f"{name}: cuDNN outside convolutions", line)
        if name.startswith(("cufftExec", "cusparseSp", "cusparseS", "cusparseD", "cusolverDn",
                            "nppi", "npps", "curandGenerate")) and not self.allow.allows_cpp(name):
            self.add("library_compute", f"{name}: vendor library computation", line)

    def _torch_name(self, parts, qual, line, call, nxt):
        root, last = parts[0], parts[-1]
        if self.allow.allows_cpp(qual):
            return
        inner = parts[1:]
        if root == "torch" and inner[:1] == ["jit"]:
            self.add("torch_compile", f"{qual}: TorchScript", line)
            return
        if "nn" in inner[:1] and root == "torch" or "native" in inner or "functional" in inner \
                or inner[:2] == ["cuda", "blas"]:
            self.add("torch_compute", f"{qual}: PyTorch layer/ATen implementation", line)
            return
        if last in CPP_STREAM_IDENTS or last in CPP_GRAPH_IDENTS or last in CPP_THREAD_ANY \
                or last in CPP_MONKEY_IDENTS or CPP_GLOBAL_SETTER.match(last):
            return  # reported by the identifier rules
        if last in ("autocast",) or "autocast" in inner:
            if self.precision:
                self.add("precision_downcast", f"{qual}: autocast", line)
            return
        if root in ("c10", "caffe2"):
            return
        if last[:1].isupper() or (last[:1] == "k" and last[1:2].isupper()):
            return   # a type or a constant
        if any(p in ("Tensor", "TensorBase") for p in inner[:-1]) and \
                last in CPP_COMPUTE_METHODS:
            self.add("torch_compute", f"{qual}: tensor method", line)
            return
        if any(p[:1].isupper() for p in inner[:-1]):
            return   # static member of a type, e.g. at::ScalarType::Float
        if last in CPP_ALLOWED_TORCH_FUNCS or last.startswith(("get", "is_")) and inner[:1] == [
                "cuda"]:
            return
        if inner[:1] == ["indexing"]:
            return
        self.add("torch_compute", f"{qual}: torch/ATen computation", line)

    # -- operators on tensors (per top-level unit) ----------------------------
    def _tensor_operators(self, toks):
        units, cur, depth, transparent = [], [], 0, []
        for k, t in enumerate(toks):
            cur.append(t)
            if t.kind == "punct" and t.text == "{":
                # namespace X { / extern "C" { keep their contents top-level
                back = [x.text for x in toks[max(0, k - 3):k]]
                is_transparent = depth == len(transparent) and (
                    "namespace" in back[-2:] or back[-1:] == ["namespace"]
                    or (len(back) >= 2 and back[-2] == "extern"))
                if is_transparent:
                    transparent.append(depth)
                    cur = []
                    depth += 1
                    continue
                depth += 1
            elif t.kind == "punct" and t.text == "}":
                depth -= 1
                if transparent and transparent[-1] == depth:
                    transparent.pop()
                    cur = []
                    continue
                if depth == len(transparent):
                    units.append(cur)
                    cur = []
            elif t.kind == "punct" and t.text == ";" and depth == len(transparent):
                units.append(cur)
                cur = []
        units.append(cur)
        ops = {"+", "-", "*", "/", "%", "+=", "-=", "*=", "/=", "%="}
        for unit in units:
            tensors = set()
            for k, t in enumerate(unit):
                if t.kind == "ident" and t.text == "Tensor":
                    m = k + 1
                    while m < len(unit) and unit[m].text in ("&", "&&", "const", "*"):
                        m += 1
                    if m < len(unit) and unit[m].kind == "ident" and (
                            m + 1 >= len(unit) or unit[m + 1].text in (",", ")", "=", ";", "(",
                                                                       "{")):
                        tensors.add(unit[m].text)
                elif t.kind == "ident" and t.text == "auto" and k + 3 < len(unit) and \
                        unit[k + 1].kind == "ident" and unit[k + 2].text == "=" and \
                        unit[k + 3].text in ("torch", "at"):
                    tensors.add(unit[k + 1].text)
            if not tensors:
                continue
            for k, t in enumerate(unit):
                if t.kind != "ident" or t.text not in tensors:
                    continue
                prev = unit[k - 1] if k else None
                nxt = unit[k + 1] if k + 1 < len(unit) else None
                if prev is not None and prev.text in (".", "->", "::"):
                    continue
                if nxt is not None and nxt.text in (".", "->", "[", "(", "::"):
                    continue
                # a declaration `Tensor x` is not an operation
                if prev is not None and prev.text in ("Tensor", "&", "&&", "const"):
                    continue
                if (nxt is not None and nxt.kind == "punct" and nxt.text in ops) or \
                        (prev is not None and prev.kind == "punct" and prev.text in ops):
                    if not self.allow.allows("torch.Tensor.__add__"):
                        self.add("torch_compute", f"arithmetic operator on tensor '{t.text}' "
                                 "runs an ATen kernel", t.line)

    def _catch_blocks(self, toks):
        for k, t in enumerate(toks):
            if t.kind == "ident" and t.text == "catch" and k + 1 < len(toks) and \
                    toks[k + 1].text == "(":
                e = _pair_end(toks, k + 1, "(", ")")
                if e + 1 < len(toks) and toks[e + 1].text == "{":
                    end = _pair_end(toks, e + 1, "{", "}")
                    body = {x.text for x in toks[e + 2:end]}
                    if not body & {"throw", "TORCH_CHECK", "AT_ERROR", "TORCH_INTERNAL_ASSERT",
                                   "abort", "exit"}:
                        self.add("try_fallback", "catch block swallows the error and carries on",
                                 t.line)


# ----------------------------------------------------------------------------
# Python: constant string resolution (for sources handed to load_inline)

class _Unresolved(Exception):
    pass


MAX_ALTS = 16


class StringResolver:
    """Evaluates string expressions made only of literals, names bound to
    such expressions, concatenation, formatting and a few pure str methods."""

    def __init__(self, tree):
        self.assigns: dict[str, list] = {}
        self.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self.params: list[dict] = []   # argument bindings of the calls being resolved
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for tgt in node.targets:
                    self._bind(tgt, node.value)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                if isinstance(node.target, ast.Name):
                    if isinstance(node, ast.AugAssign):
                        self.assigns.setdefault(node.target.id, []).append(
                            ast.BinOp(left=ast.Name(id=node.target.id, ctx=ast.Load()),
                                      op=node.op, right=node.value, lineno=node.lineno,
                                      col_offset=node.col_offset))
                    else:
                        self.assigns.setdefault(node.target.id, []).append(node.value)

    def _bind(self, tgt, value):
        if isinstance(tgt, ast.Name):
            self.assigns.setdefault(tgt.id, []).append(value)
        elif isinstance(tgt, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(tgt.elts) == len(value.elts):
            for a, b in zip(tgt.elts, value.elts):
                self._bind(a, b)

    def resolve(self, node, depth=0):
        """List of alternatives; each a list of (text, lineno) segments."""
        if depth > 40:
            raise _Unresolved("too deep")
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                # Line k of the text is line lineno+k-1 of the file only when the
                # literal spells its newlines out (a triple-quoted string).
                linear = (node.end_lineno or node.lineno) - node.lineno == node.value.count("\n")
                return [[(node.value, node.lineno, linear)]]
            if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
                return [[(str(node.value), node.lineno, False)]]
            if node.value is None:
                return [[]]
            raise _Unresolved(repr(node.value))
        if isinstance(node, ast.Name):
            if self.params and node.id in self.params[-1]:
                bound = self.params.pop()
                try:
                    return self.resolve(bound[node.id], depth + 1)
                finally:
                    self.params.append(bound)
            values = self.assigns.get(node.id)
            if not values:
                raise _Unresolved(node.id)
            out = []
            for v in values:
                if isinstance(v, ast.BinOp) and isinstance(v.left, ast.Name) \
                        and v.left.id == node.id:
                    continue   # x += "..." handled below
                out += self.resolve(v, depth + 1)
            aug = [v for v in values if isinstance(v, ast.BinOp) and isinstance(v.left, ast.Name)
                   and v.left.id == node.id]
            for v in aug:   # append every augmentation to every base alternative
                extra = self.resolve(v.right, depth + 1)
                out = [a + b for a in out for b in extra][:MAX_ALTS]
            return out[:MAX_ALTS]
        if isinstance(node, (ast.List, ast.Tuple)):
            out = [[]]
            for e in node.elts:
                alts = self.resolve(e, depth + 1)
                out = [a + [("\n", None, True)] + b for a in out for b in alts][:MAX_ALTS]
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self.resolve(node.left, depth + 1)
            right = self.resolve(node.right, depth + 1)
            return [a + b for a in left for b in right][:MAX_ALTS]
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Sub, ast.FloorDiv,
                                                                ast.Pow, ast.LShift)):
            # numeric constants used inside f-strings; string repetition
            left = self.resolve(node.left, depth + 1)
            right = self.resolve(node.right, depth + 1)
            out = []
            for a in left:
                for b in right:
                    sa, sb = "".join(s for s, *_ in a), "".join(s for s, *_ in b)
                    try:
                        va = int(sa) if sa.lstrip("-").isdigit() else sa
                        vb = int(sb) if sb.lstrip("-").isdigit() else sb
                        if isinstance(node.op, ast.Mult):
                            if isinstance(va, str) and isinstance(vb, int) and vb > 64:
                                raise _Unresolved("large repeat")
                            r = va * vb
                        elif isinstance(va, int) and isinstance(vb, int):
                            r = {ast.Sub: lambda: va - vb, ast.FloorDiv: lambda: va // vb,
                                 ast.Pow: lambda: va ** vb if vb < 64 else 0,
                                 ast.LShift: lambda: va << vb if vb < 64 else 0}[
                                type(node.op)]()
                        else:
                            raise _Unresolved("operator")
                    except (TypeError, ZeroDivisionError, KeyError) as exc:
                        raise _Unresolved(str(exc)) from None
                    out.append([(str(r), a[0][1] if a else None, False)])
            return out[:MAX_ALTS]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return self._format(node.left, [node.right], {}, "%", depth)
        if isinstance(node, ast.JoinedStr):
            out = [[]]
            for v in node.values:
                if isinstance(v, ast.Constant):
                    alts = [[(str(v.value), node.lineno, False)]]
                elif isinstance(v, ast.FormattedValue):
                    alts = self.resolve(v.value, depth + 1)
                else:
                    raise _Unresolved("f-string part")
                out = [a + b for a in out for b in alts][:MAX_ALTS]
            return out
        if isinstance(node, ast.IfExp):
            return (self.resolve(node.body, depth + 1) + self.resolve(node.orelse, depth + 1))[
                :MAX_ALTS]
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in self.functions and not node.keywords and \
                    len(self.params) < 4:
                return self._call_local(self.functions[f.id], node.args, depth)
            if isinstance(f, ast.Attribute) and f.attr == "dedent" or \
                    isinstance(f, ast.Name) and f.id == "dedent":
                if len(node.args) == 1:
                    return self.resolve(node.args[0], depth + 1)
            if isinstance(f, ast.Name) and f.id == "str" and len(node.args) == 1:
                return self.resolve(node.args[0], depth + 1)
            if isinstance(f, ast.Attribute):
                if f.attr == "format":
                    return self._format(f.value, node.args, {k.arg: k.value for k in node.keywords
                                                             if k.arg}, "format", depth)
                if f.attr == "join" and len(node.args) == 1:
                    seps = self.resolve(f.value, depth + 1)
                    arg = node.args[0]
                    if not isinstance(arg, (ast.List, ast.Tuple)):
                        if isinstance(arg, ast.Name):
                            vals = self.assigns.get(arg.id) or []
                            if len(vals) == 1 and isinstance(vals[0], (ast.List, ast.Tuple)):
                                arg = vals[0]
                    if not isinstance(arg, (ast.List, ast.Tuple)):
                        raise _Unresolved("join argument")
                    items = [self.resolve(e, depth + 1) for e in arg.elts]
                    out = []
                    for sep in seps:
                        acc = [[]]
                        for k, alts in enumerate(items):
                            acc = [a + (sep if k else []) + b for a in acc for b in alts][
                                :MAX_ALTS]
                        out += acc
                    return out[:MAX_ALTS]
                if f.attr in ("replace", "strip", "lstrip", "rstrip", "upper", "lower"):
                    base = self.resolve(f.value, depth + 1)
                    args = [self.resolve(a, depth + 1) for a in node.args]
                    out = []
                    for b in base:
                        text = "".join(s for s, *_ in b)
                        line = next((ln for _, ln, *_ in b if ln), None)
                        argsets = [[]]
                        for alts in args:
                            argsets = [x + ["".join(s for s, *_ in y)] for x in argsets
                                       for y in alts][:MAX_ALTS]
                        for a in argsets:
                            try:
                                out.append([(getattr(text, f.attr)(*a), line, False)])
                            except TypeError as exc:
                                raise _Unresolved(str(exc)) from None
                    return out[:MAX_ALTS]
        raise _Unresolved(type(node).__name__)

    def _call_local(self, fn, args, depth):
        """A source built by a local function from constant arguments."""
        names = [a.arg for a in fn.args.args]
        if len(args) > len(names) or fn.args.vararg or fn.args.kwarg:
            raise _Unresolved(f"call of {fn.name}")
        bound = dict(zip(names, args))
        missing = names[len(args):]
        defaults = fn.args.defaults[len(fn.args.defaults) - len(missing):] if missing else []
        if len(defaults) != len(missing):
            raise _Unresolved(f"call of {fn.name}")
        bound.update(zip(missing, defaults))
        returns = [r.value for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value]
        if not returns:
            raise _Unresolved(f"call of {fn.name}")
        self.params.append(bound)
        try:
            out = []
            for r in returns:
                out += self.resolve(r, depth + 1)
            return out[:MAX_ALTS]
        finally:
            self.params.pop()

    def _format(self, template, args, kwargs, style, depth):
        temps = self.resolve(template, depth + 1)
        if style == "%" and len(args) == 1 and isinstance(args[0], ast.Tuple):
            args = list(args[0].elts)
        arg_alts = [self.resolve(a, depth + 1) for a in args]
        kw_alts = {k: self.resolve(v, depth + 1) for k, v in kwargs.items()}
        out = []
        for t in temps:
            text = "".join(s for s, *_ in t)
            line = next((ln for _, ln, *_ in t if ln), None)
            values = ["".join(s for s, *_ in a[0]) for a in arg_alts]
            kw = {k: "".join(s for s, *_ in a[0]) for k, a in kw_alts.items()}
            try:
                if style == "%":
                    r = text % tuple(values) if len(values) != 1 else text % values[0]
                else:
                    r = text.format(*values, **kw)
            except (TypeError, ValueError, KeyError, IndexError) as exc:
                raise _Unresolved(str(exc)) from None
            out.append([(r, line, False)])
            # other alternatives of the arguments: scan them too, formatted alone
            for a in arg_alts + list(kw_alts.values()):
                for alt in a[1:]:
                    out.append(alt)
        return out[:MAX_ALTS]


def segments_line_map(segments):
    """Maps a line of the joined text to the Python line of its segment."""
    starts = []   # (first line of segment in joined text, python line, linear)
    cur = 1
    for text, ln, linear in segments:
        starts.append((cur, ln, linear))
        cur += text.count("\n")

    def mapper(line):
        best = None
        for first, ln, linear in starts:
            if first <= line and ln is not None:
                best = ln + (line - first) if linear else ln
            elif first > line:
                break
        return best if best is not None else 0

    return mapper


# ----------------------------------------------------------------------------
# Python: abstract interpretation of the forward path
#
# Values are sets of tags:
#   T tensor, L container holding tensors, N not a tensor, M torch.nn module instance,
#   E compiled extension module, EF extension function, P:<path> imported name,
#   F:<id> local function, B:<cls>:<id> bound method, C:<cls> local class,
#   I:<cls> instance of a local class, TM:<m> tensor method, UM:<m> method of a value
#   of unknown type, MA:<m> attribute of an nn module, NM non-tensor method,
#   SUPER:<cls>, BI:<name> builtin.  An empty set means unknown.

EMPTY = frozenset()
T = frozenset({"T"})
N = frozenset({"N"})


class FuncInfo:
    def __init__(self, fid, node, cls=None, parent=None):
        self.fid = fid
        self.node = node          # FunctionDef / AsyncFunctionDef / Lambda
        self.cls = cls            # owning local class name (methods)
        self.parent = parent      # enclosing FuncInfo (closures)
        self.params: dict[str, frozenset] = {}
        self.locals: dict[str, frozenset] = {}
        self.returns = EMPTY
        self.global_names = set()
        self.entry = False
        self.call_seen = False
        self.callback = False


class ClassInfo:
    def __init__(self, name, node):
        self.name = name
        self.node = node
        self.methods: dict[str, str] = {}   # name -> fid
        self.attrs: dict[str, frozenset] = {}
        self.local_bases: list[str] = []
        self.torch_bases: list[str] = []
        self.ref_base = False


class ForwardAnalysis:
    """Finds torch computation (and a few other things only visible with
    types) in ModelNew's forward path: its methods other than __init__ and
    every local function they reach."""

    def __init__(self, tree, findings: FindingSet, allow: AllowList, precision: bool,
                 resolve_path, const_str):
        self.tree = tree
        self.const_str = const_str
        self.f = findings
        self.allow = allow
        self.precision = precision
        self.resolve_path = resolve_path
        self.funcs: dict[str, FuncInfo] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.globals: dict[str, frozenset] = {}
        self.reachable: set[str] = set()
        self.init_called: set[str] = set()
        self.changed = False
        self.report = False
        self.module_fn = FuncInfo("<module>", tree)
        self._node_fid: dict[int, str] = {}
        self._register_module()

    # -- registration --------------------------------------------------------
    def _register_module(self):
        for node in self.tree.body:
            self._register_stmt(node, None, None)

    def _register_stmt(self, node, cls, parent):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fid = f"{cls + '.' if cls else ''}{node.name}@{node.lineno}"
            info = FuncInfo(fid, node, cls, parent)
            self.funcs[fid] = info
            self._node_fid[id(node)] = fid
            if cls:
                self.classes[cls].methods[node.name] = fid
            for sub in ast.walk(node):
                if sub is not node and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                        ast.Lambda)):
                    if id(sub) not in self._node_fid:
                        self._register_nested(sub, info)
            return fid
        if isinstance(node, ast.ClassDef) and cls is None:
            ci = ClassInfo(node.name, node)
            self.classes[node.name] = ci
            for stmt in node.body:
                self._register_stmt(stmt, node.name, None)
            for sub in ast.walk(node):
                if isinstance(sub, ast.Lambda) and id(sub) not in self._node_fid:
                    self._register_nested(sub, None)
            return None
        for sub in ast.walk(node):
            if isinstance(sub, ast.Lambda) and id(sub) not in self._node_fid:
                self._register_nested(sub, None)
        return None

    def _register_nested(self, node, parent):
        name = getattr(node, "name", "<lambda>")
        fid = f"{parent.fid + '.' if parent else ''}{name}@{node.lineno}:{node.col_offset}"
        info = FuncInfo(fid, node, parent.cls if parent else None, parent)
        self.funcs[fid] = info
        self._node_fid[id(node)] = fid
        for sub in ast.walk(node):
            if sub is not node and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                    ast.Lambda)) and id(sub) not in self._node_fid:
                self._register_nested(sub, info)

    # -- driver -----------------------------------------------------------------
    def run(self):
        mn = self.classes.get("ModelNew")
        self._setup_classes()
        if mn is not None:
            for cname in self._class_chain("ModelNew"):
                for mname, fid in self.classes[cname].methods.items():
                    if mname != "__init__":
                        self._mark_reachable(fid, entry=(mname in ("forward", "__call__")))
                if "__init__" in self.classes[cname].methods:
                    self.init_called.add(self.classes[cname].methods["__init__"])
        for _ in range(12):
            self.changed = False
            self._assigned_entries(report=False)
            self._eval_block(self.module_fn, self.tree.body, reach=False)
            for fid in list(self.init_called):
                self._eval_function(self.funcs[fid], reach=False)
            for fid in list(self.reachable):
                self._eval_function(self.funcs[fid], reach=True)
            if not self.changed:
                break
        self.report = True
        for fid in sorted(self.reachable):
            self._eval_function(self.funcs[fid], reach=True)
        self._assigned_entries(report=True)
        self.report = False

    def _assigned_entries(self, report):
        """forward/__call__ bound by assignment (self.forward = ..., ModelNew.forward = ...)."""
        if "ModelNew" not in self.classes:
            return
        for cname in self._class_chain("ModelNew"):
            ci = self.classes[cname]
            for attr in ("forward", "__call__"):
                for t in ci.attrs.get(attr, EMPTY):
                    if t.startswith("F:") or t.startswith("B:"):
                        fid = t.split(":", 2)[-1] if t.startswith("B:") else t[2:]
                        if fid in self.funcs:
                            self.funcs[fid].callback = True
                            self._mark_reachable(fid)
                    elif report and t.startswith("P:torch") and not self._torch_call_allowed(
                            t[2:]):
                        self.f.add("torch_compute", f"ModelNew.{attr} is {t[2:]}",
                                   getattr(ci.node, "lineno", 0))

    def _setup_classes(self):
        for ci in self.classes.values():
            for b in ci.node.bases:
                if isinstance(b, ast.Name) and b.id in self.classes:
                    ci.local_bases.append(b.id)
                elif isinstance(b, ast.Name) and b.id == "Model":
                    ci.ref_base = True
                else:
                    for p in self.resolve_path(b):
                        ci.torch_bases.append(p)

    def _class_chain(self, cname, seen=None):
        seen = seen or set()
        if cname in seen or cname not in self.classes:
            return []
        seen.add(cname)
        out = [cname]
        for b in self.classes[cname].local_bases:
            out += self._class_chain(b, seen)
        return out

    def _mark_reachable(self, fid, entry=False):
        info = self.funcs[fid]
        if entry:
            info.entry = True
        if fid not in self.reachable:
            self.reachable.add(fid)
            self.changed = True

    def _union(self, d, key, tags):
        old = d.get(key, EMPTY)
        new = old | tags
        if new != old:
            d[key] = new
            self.changed = True

    # -- functions ------------------------------------------------------------------
    def _eval_function(self, info: FuncInfo, reach: bool):
        node = info.node
        args = node.args
        all_args = args.posonlyargs + args.args
        defaults = [None] * (len(all_args) - len(args.defaults)) + list(args.defaults)
        for k, (a, d) in enumerate(zip(all_args, defaults)):
            tags = info.params.get(a.arg, EMPTY)
            if d is not None and not isinstance(d, ast.Constant):
                tags = tags | self._eval(info.parent or self.module_fn, d, False)
            if k == 0 and info.cls and not isinstance(node, ast.Lambda) and \
                    not self._is_static(node):
                tags = frozenset({f"I:{info.cls}"})
            elif info.entry or info.callback or (reach and not info.call_seen):
                tags = tags | self._param_default(a, d)
            elif d is not None:
                tags = tags | self._const_tags(d)
            self._union(info.locals, a.arg, tags)
        for a, d in zip(args.kwonlyargs, args.kw_defaults):
            tags = info.params.get(a.arg, EMPTY)
            if info.entry or info.callback:
                tags = tags | self._param_default(a, d)
            self._union(info.locals, a.arg, tags)
        for a in (args.vararg, args.kwarg):
            if a is not None:
                self._union(info.locals, a.arg, frozenset({"L"}) if info.entry else EMPTY)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Global):
                info.global_names.update(sub.names)
        if isinstance(node, ast.Lambda):
            self._union_returns(info, self._eval(info, node.body, reach))
        else:
            for d in node.decorator_list:
                self._eval(info.parent or self.module_fn, d, reach)
            self._eval_block(info, node.body, reach)
            self._eval_block(info, node.body, reach)

    def _is_static(self, node):
        return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in
                   node.decorator_list)

    def _param_default(self, a, d):
        ann = a.annotation
        if ann is not None:
            txt = ast.unparse(ann)
            if any(w in txt for w in ("int", "float", "bool", "str", "tuple", "Tuple", "List",
                                      "list", "Sequence", "dtype", "Optional[int]")) and \
                    "Tensor" not in txt:
                return N
        if d is not None:
            c = self._const_tags(d)
            if c == N:
                return N
        return T

    def _const_tags(self, d):
        if isinstance(d, ast.Constant) or (isinstance(d, (ast.Tuple, ast.List)) and all(
                isinstance(e, ast.Constant) for e in d.elts)):
            return N
        return EMPTY

    def _union_returns(self, info, tags):
        new = info.returns | tags
        if new != info.returns:
            info.returns = new
            self.changed = True

    # -- statements -----------------------------------------------------------------
    def _eval_block(self, info, body, reach):
        for st in body:
            self._eval_stmt(info, st, reach)

    def _eval_stmt(self, info, st, reach):
        E = lambda e: self._eval(info, e, reach)  # noqa: E731
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fid = self._node_fid.get(id(st))
            if info is not self.module_fn and fid:
                self._bind_name(info, st.name, frozenset({f"F:{fid}"}))
            elif fid and info is self.module_fn:
                self._union(self.globals, st.name, frozenset({f"F:{fid}"}))
            return
        if isinstance(st, ast.ClassDef):
            if info is self.module_fn:
                self._union(self.globals, st.name, frozenset({f"C:{st.name}"}))
                for sub in st.body:
                    if isinstance(sub, (ast.Assign, ast.AnnAssign)) and sub.value is not None:
                        v = E(sub.value)
                        tgts = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                        for t in tgts:
                            if isinstance(t, ast.Name):
                                self._union(self.classes[st.name].attrs, t.id, v)
            return
        if isinstance(st, ast.Assign):
            v = E(st.value)
            for tgt in st.targets:
                self._bind(info, tgt, v, st.value, reach)
        elif isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self._bind(info, st.target, E(st.value), st.value, reach)
        elif isinstance(st, ast.AugAssign):
            cur = E(st.target)
            v = E(st.value)
            if ("T" in cur or "T" in v) and reach:
                self._compute(st, f"in-place operator {_op(st.op)}= on a tensor")
            self._bind(info, st.target, cur | v, None, reach, aug=True)
        elif isinstance(st, (ast.For, ast.AsyncFor)):
            self._bind_iter(info, st.target, st.iter, reach)
            self._eval_block(info, st.body, reach)
            self._eval_block(info, st.orelse, reach)
        elif isinstance(st, ast.While):
            E(st.test)
            self._eval_block(info, st.body, reach)
            self._eval_block(info, st.orelse, reach)
        elif isinstance(st, ast.If):
            E(st.test)
            self._eval_block(info, st.body, reach)
            self._eval_block(info, st.orelse, reach)
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            for item in st.items:
                v = E(item.context_expr)
                if item.optional_vars is not None:
                    self._bind(info, item.optional_vars, v, None, reach)
            self._eval_block(info, st.body, reach)
        elif isinstance(st, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self._eval_block(info, st.body, reach)
            for h in st.handlers:
                if h.type is not None:
                    E(h.type)
                if h.name:
                    self._bind_name(info, h.name, N)
                self._eval_block(info, h.body, reach)
            self._eval_block(info, st.orelse, reach)
            self._eval_block(info, st.finalbody, reach)
        elif isinstance(st, ast.Return):
            if st.value is not None:
                v = E(st.value)
                self._union_returns(info, v)
                if reach:
                    for t in v:
                        if t.startswith("P:torch.") and self._is_torch_function_value(t[2:]):
                            self._compute(st, f"returns {t[2:]} as a function")
        elif isinstance(st, ast.Expr):
            E(st.value)
        elif isinstance(st, ast.Raise):
            if st.exc is not None:
                E(st.exc)
        elif isinstance(st, ast.Assert):
            E(st.test)
        elif isinstance(st, ast.Delete):
            for t in st.targets:
                E(t)
        elif isinstance(st, (ast.Import, ast.ImportFrom)):
            for a in st.names:
                if a.name == "*":
                    continue
                if isinstance(st, ast.Import):
                    bound = a.asname or a.name.split(".")[0]
                    path = a.name if a.asname else a.name.split(".")[0]
                else:
                    mod = ("." * st.level) + (st.module or "")
                    bound = a.asname or a.name
                    path = f"{mod}.{a.name}" if mod else a.name
                self._bind_name(info, bound, frozenset({f"P:{path}"}))
        elif hasattr(ast, "Match") and isinstance(st, ast.Match):
            E(st.subject)
            for case in st.cases:
                self._eval_block(info, case.body, reach)

    def _bind_name(self, info, name, tags):
        if info is self.module_fn or name in info.global_names:
            self._union(self.globals, name, tags)
        else:
            self._union(info.locals, name, tags)

    def _bind(self, info, tgt, tags, value_node, reach, aug=False):
        if isinstance(tgt, ast.Name):
            self._bind_name(info, tgt.id, tags)
        elif isinstance(tgt, (ast.Tuple, ast.List)):
            if isinstance(value_node, (ast.Tuple, ast.List)) and \
                    len(value_node.elts) == len(tgt.elts):
                for t, v in zip(tgt.elts, value_node.elts):
                    self._bind(info, t, self._eval(info, v, False), v, reach)
            else:
                el = self._elem(tags)
                for t in tgt.elts:
                    self._bind(info, t.value if isinstance(t, ast.Starred) else t,
                               frozenset({"L"}) if isinstance(t, ast.Starred) and "T" in el
                               else el, None, reach)
        elif isinstance(tgt, ast.Starred):
            self._bind(info, tgt.value, tags, None, reach)
        elif isinstance(tgt, ast.Attribute):
            base = self._eval(info, tgt.value, reach)
            for tag in base:
                if tag.startswith("I:") or tag.startswith("C:"):
                    cname = tag[2:]
                    if cname in self.classes:
                        self._union(self.classes[cname].attrs, tgt.attr, tags)
                elif tag == "T" and reach and not aug and tgt.attr in ("data",):
                    self._compute(tgt, "assigns tensor.data")
        elif isinstance(tgt, ast.Subscript):
            base = self._eval(info, tgt.value, reach)
            self._eval(info, tgt.slice, reach)
            if "T" in base and reach:
                self._compute(tgt, "indexed assignment into a tensor runs a copy/fill kernel")

    def _bind_iter(self, info, target, iter_node, reach):
        if isinstance(iter_node, ast.Call) and isinstance(iter_node.func, ast.Name) and \
                iter_node.func.id in ("enumerate", "zip") and \
                self._lookup(info, iter_node.func.id) == frozenset({f"BI:{iter_node.func.id}"}):
            args = [self._eval(info, a, reach) for a in iter_node.args]
            for k in iter_node.keywords:
                self._eval(info, k.value, reach)
            if isinstance(target, (ast.Tuple, ast.List)):
                if iter_node.func.id == "enumerate" and len(target.elts) == 2 and args:
                    self._bind(info, target.elts[0], N, None, reach)
                    self._bind(info, target.elts[1], self._elem(args[0]), None, reach)
                    return
                if iter_node.func.id == "zip" and len(target.elts) == len(args):
                    for t, a in zip(target.elts, args):
                        self._bind(info, t, self._elem(a), None, reach)
                    return
            self._bind(info, target, EMPTY, None, reach)
            return
        self._bind(info, target, self._elem(self._eval(info, iter_node, reach)), None, reach)

    def _elem(self, tags):
        out = set()
        for t in tags:
            if t in ("T", "L"):
                out.add("T")
            elif t == "N":
                out.add("N")
            elif t == "M":
                out.add("M")
        return frozenset(out)

    # -- expressions ----------------------------------------------------------------
    def _lookup(self, info, name):
        cur = info
        while cur is not None:
            if name in cur.locals and name not in cur.global_names:
                return cur.locals[name]
            cur = cur.parent
        if name in self.globals:
            return self.globals[name]
        if name == "Model":
            return frozenset({"REF"})
        if hasattr(builtins, name):
            return frozenset({f"BI:{name}"})
        return EMPTY

    def _compute(self, node, detail):
        if self.report:
            self.f.add("torch_compute", detail, getattr(node, "lineno", 0))

    def _eval(self, info, e, reach, callee=False) -> frozenset:
        if e is None:
            return EMPTY
        if isinstance(e, ast.Constant):
            return N
        if isinstance(e, ast.Name):
            tags = self._lookup(info, e.id)
            if not callee:
                for t in tags:
                    if t.startswith("F:") and t[2:] in self.funcs:
                        # Handed on (stored, wrapped, passed as a callback): it may
                        # run at forward time with arguments we do not see.
                        self.funcs[t[2:]].callback = True
                        self._mark_reachable(t[2:])
            return tags
        if isinstance(e, ast.Attribute):
            return self._attr(info, e, self._eval(info, e.value, reach), e.attr, reach)
        if isinstance(e, ast.Call):
            return self._call(info, e, reach)
        if isinstance(e, ast.BinOp):
            lt, rt = self._eval(info, e.left, reach), self._eval(info, e.right, reach)
            if "T" in lt or "T" in rt or (isinstance(e.op, ast.MatMult) and (
                    not lt or not rt)):
                if reach:
                    self._compute(e, f"operator {_op(e.op)} on a tensor runs an ATen kernel")
                return T
            if lt == N and rt == N:
                return N
            if "L" in lt and isinstance(e.op, (ast.Add, ast.Mult)):
                return frozenset({"L"})
            return EMPTY if not (lt | rt) <= {"N"} else N
        if isinstance(e, ast.UnaryOp):
            v = self._eval(info, e.operand, reach)
            if isinstance(e.op, ast.Not):
                return N
            if "T" in v:
                if reach:
                    self._compute(e, f"unary {_op(e.op)} on a tensor runs an ATen kernel")
                return T
            return v
        if isinstance(e, ast.Compare):
            vals = [self._eval(info, e.left, reach)] + [self._eval(info, c, reach)
                                                        for c in e.comparators]
            arith = [op for op in e.ops if not isinstance(op, (ast.Is, ast.IsNot, ast.In,
                                                              ast.NotIn))]
            if arith and any("T" in v for v in vals):
                if reach:
                    self._compute(e, "comparison on a tensor runs an ATen kernel")
                return T
            return N
        if isinstance(e, ast.BoolOp):
            out = EMPTY
            for v in e.values:
                out |= self._eval(info, v, reach)
            return out
        if isinstance(e, ast.IfExp):
            self._eval(info, e.test, reach)
            return self._eval(info, e.body, reach) | self._eval(info, e.orelse, reach)
        if isinstance(e, ast.Subscript):
            base = self._eval(info, e.value, reach)
            index = self._eval(info, e.slice, reach)
            if reach and "T" in base and ("T" in index or "L" in index):
                self._compute(e, "indexing a tensor with a tensor runs a gather kernel")
            out = set()
            for t in base:
                if t in ("T", "L"):
                    out.add("T")
                elif t == "N":
                    out.add("N")
                elif t == "M":
                    out.add("M")
                elif t.startswith("P:"):
                    out.add(t)
            return frozenset(out)
        if isinstance(e, ast.Starred):
            return self._eval(info, e.value, reach)
        if isinstance(e, (ast.List, ast.Tuple, ast.Set)):
            vals = [self._eval(info, x, reach) for x in e.elts]
            return frozenset({"L"}) if any(("T" in v or "L" in v) for v in vals) else N
        if isinstance(e, ast.Dict):
            vals = [self._eval(info, x, reach) for x in e.values] + [
                self._eval(info, k, reach) for k in e.keys if k is not None]
            return frozenset({"L"}) if any("T" in v for v in vals) else N
        if isinstance(e, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for gen in e.generators:
                self._bind_iter(info, gen.target, gen.iter, reach)
                for cond in gen.ifs:
                    self._eval(info, cond, reach)
            if isinstance(e, ast.DictComp):
                v = self._eval(info, e.key, reach) | self._eval(info, e.value, reach)
            else:
                v = self._eval(info, e.elt, reach)
            return frozenset({"L"}) if "T" in v else N
        if isinstance(e, ast.NamedExpr):
            v = self._eval(info, e.value, reach)
            self._bind(info, e.target, v, e.value, reach)
            return v
        if isinstance(e, ast.Lambda):
            fid = self._node_fid.get(id(e))
            if fid and reach:
                self.funcs[fid].callback = True
                self._mark_reachable(fid)
            return frozenset({f"F:{fid}"}) if fid else EMPTY
        if isinstance(e, ast.JoinedStr):
            for v in e.values:
                if isinstance(v, ast.FormattedValue):
                    self._eval(info, v.value, reach)
            return N
        if isinstance(e, ast.Slice):
            for x in (e.lower, e.upper, e.step):
                self._eval(info, x, reach)
            return N
        if isinstance(e, (ast.Await, ast.Yield, ast.YieldFrom)):
            return self._eval(info, e.value, reach)
        return EMPTY

    def _attr(self, info, node, base, attr, reach):
        out = set()
        for t in base:
            if t.startswith("P:"):
                out.add(f"P:{t[2:]}.{attr}")
            elif t == "T":
                if attr in TENSOR_TENSOR_ATTRS:
                    out.add("T")
                elif attr in TENSOR_META_ATTRS:
                    out.add("N")
                else:
                    out.add(f"TM:{attr}")
            elif t.startswith("I:"):
                cname = t[2:]
                found = False
                for c in self._class_chain(cname):
                    ci = self.classes[c]
                    if attr in ci.methods:
                        out.add(f"B:{cname}:{ci.methods[attr]}")
                        found = True
                        break
                    if attr in ci.attrs:
                        out |= ci.attrs[attr]
                        found = True
                        break
                if not found:
                    ci = self.classes.get(cname)
                    tb = []
                    for c in self._class_chain(cname):
                        tb += self.classes[c].torch_bases
                    if attr in ("forward",) and any(p.startswith("torch.nn.") and
                                                    p != "torch.nn.Module" for p in tb):
                        out.add("MA:forward")
                    elif ci is not None:
                        out.add(f"UM:{attr}")
            elif t.startswith("C:"):
                cname = t[2:]
                for c in self._class_chain(cname):
                    ci = self.classes[c]
                    if attr in ci.methods:
                        out.add(f"F:{ci.methods[attr]}")
                        break
                    if attr in ci.attrs:
                        out |= ci.attrs[attr]
                        break
            elif t == "M":
                out.add("T" if attr in NN_PARAM_ATTRS else f"MA:{attr}")
            elif t == "E":
                out.add("EF")
            elif t.startswith("SUPER:"):
                cname = t[6:]
                ci = self.classes.get(cname)
                if ci is None:
                    continue
                hit = False
                for b in ci.local_bases:
                    for c in self._class_chain(b):
                        if attr in self.classes[c].methods:
                            out.add(f"B:{cname}:{self.classes[c].methods[attr]}")
                            hit = True
                            break
                    if hit:
                        break
                if not hit:
                    for p in ci.torch_bases:
                        out.add(f"P:{p}.{attr}")
                    if ci.ref_base:
                        out.add("REF")
            elif t == "N" or t == "NM":
                out.add("NM")
            elif t == "L":
                out.add("NM")
            elif t == "REF":
                out.add("REF")
        if not out:
            # type(x).sum, x.__class__.sum, attributes of unknown objects ...
            out.add(f"UM:{attr}")
        return frozenset(out)

    def _call(self, info, e, reach):
        ftags = self._eval(info, e.func, reach, callee=True)
        arg_tags = [self._eval(info, a, reach) for a in e.args]
        kw_tags = {k.arg: self._eval(info, k.value, reach) for k in e.keywords}
        if reach:
            for tags in arg_tags + list(kw_tags.values()):
                for t in tags:
                    if t.startswith("P:torch.") and self._is_torch_function_value(t[2:]):
                        self._compute(e, f"passes {t[2:]} on as a function")
        out = set()
        for tag in ftags:
            if tag.startswith("P:"):
                out |= self._call_path(tag[2:], e, arg_tags, kw_tags, reach)
            elif tag.startswith("F:") or tag.startswith("B:"):
                bound = tag.startswith("B:")
                fid = tag.split(":", 2)[-1] if bound else tag[2:]
                finfo = self.funcs.get(fid)
                if finfo is None:
                    continue
                if reach:
                    self._mark_reachable(fid)
                else:
                    if fid not in self.init_called:
                        self.init_called.add(fid)
                        self.changed = True
                finfo.call_seen = True
                self._bind_args(finfo, arg_tags, kw_tags, bound)
                out |= finfo.returns
            elif tag.startswith("C:"):
                cname = tag[2:]
                for c in self._class_chain(cname):
                    ini = self.classes[c].methods.get("__init__")
                    if ini:
                        (self._mark_reachable(ini) if reach else self.init_called.add(ini))
                        self._bind_args(self.funcs[ini], arg_tags, kw_tags, True)
                        break
                # a local class whose other methods may run later
                for c in self._class_chain(cname):
                    for mname, fid in self.classes[c].methods.items():
                        if mname != "__init__":
                            self._mark_reachable(fid, entry=(mname in ("forward", "__call__")))
                tb = [p for c in self._class_chain(cname) for p in self.classes[c].torch_bases]
                out.add("M" if any(p.startswith("torch.nn.") and p != "torch.nn.Module"
                                   for p in tb) else f"I:{cname}")
            elif tag.startswith("I:"):
                cname = tag[2:]
                meth = None
                for c in self._class_chain(cname):
                    ci = self.classes[c]
                    meth = ci.methods.get("__call__") or ci.methods.get("forward")
                    if meth:
                        break
                if meth:
                    if reach:
                        self._mark_reachable(meth)
                    self._bind_args(self.funcs[meth], arg_tags, kw_tags, True)
                    out |= self.funcs[meth].returns
            elif tag == "M":
                if reach:
                    self._compute(e, "calls a torch.nn module (its forward is PyTorch's)")
                out.add("T")
            elif tag.startswith("MA:"):
                m = tag[3:]
                if reach:
                    self._compute(e, f"calls torch.nn module method .{m}()")
                out.add("T")
            elif tag == "E" or tag == "EF":
                out.add("T")
            elif tag.startswith("TM:"):
                out |= self._tensor_method(tag[3:], e, arg_tags, kw_tags, reach, known=True)
            elif tag.startswith("UM:"):
                out |= self._tensor_method(tag[3:], e, arg_tags, kw_tags, reach, known=False)
            elif tag == "NM":
                out.add("N")
            elif tag.startswith("BI:"):
                out |= self._builtin(info, tag[3:], e, arg_tags, kw_tags, reach)
            elif tag == "REF":
                out.add("T")
        return frozenset(out)

    def _bind_args(self, finfo, arg_tags, kw_tags, bound):
        node = finfo.node
        params = [a.arg for a in node.args.posonlyargs + node.args.args]
        if bound and params and not (not isinstance(node, ast.Lambda) and self._is_static(node)):
            params = params[1:]
        for p, t in zip(params, arg_tags):
            self._union(finfo.params, p, t)
        if len(arg_tags) > len(params) and node.args.vararg is not None:
            extra = frozenset().union(*arg_tags[len(params):])
            self._union(finfo.params, node.args.vararg.arg,
                        frozenset({"L"}) if "T" in extra or "L" in extra else N)
        for k, t in kw_tags.items():
            if k is not None:
                self._union(finfo.params, k, t)
        for p in list(finfo.params):
            self._union(finfo.locals, p, finfo.params[p])

    def _call_path(self, path, e, arg_tags, kw_tags, reach):
        root = path.split(".")[0]
        if path == LOAD_INLINE or path == "torch.utils.cpp_extension.load":
            return frozenset({"E"})
        if path in ("functools.partial", "functools.wraps", "functools.update_wrapper",
                    "functools.lru_cache", "functools.cache") and arg_tags:
            return arg_tags[0]
        if root != "torch":
            if path in ("math.prod",) or root in ("math", "typing", "os", "collections", "textwrap"):
                return N
            return EMPTY
        if path.startswith("torch.nn.") and path.split(".")[-1][:1].isupper() and \
                path not in ("torch.nn.Parameter", "torch.nn.Module", "torch.nn.ParameterList",
                             "torch.nn.ParameterDict", "torch.nn.Buffer"):
            if reach:
                self._compute(e, f"builds and runs torch.nn layer {path} in forward")
            return frozenset({"M"})
        if path in ("torch.nn.Parameter", "torch.nn.Buffer"):
            return T
        allowed = self._torch_call_allowed(path)
        if path.startswith("torch.ops."):
            parts = path.split(".")
            if len(parts) > 2 and parts[2] not in ATEN_OP_NAMESPACES:
                return T
        if not allowed:
            if reach and not path_matches(path, OWNED_BY_OTHER_CHECKS) and \
                    not is_private_torch(path):
                self._compute(e, f"calls {path} in the forward path")
            return EMPTY if path.split(".")[-1][:1].isupper() else T
        if path in ("torch.empty", "torch.empty_like", "torch.empty_strided", "torch.zeros",
                    "torch.zeros_like", "torch.tensor") or path.startswith("torch.Tensor."):
            if path.startswith("torch.Tensor.") and path.split(".")[-1] in TENSOR_META_METHODS:
                return N
            return T
        return N

    def _is_torch_function_value(self, path):
        last = path.split(".")[-1]
        if not last[:1].islower() or last in TORCH_VALUE_NAMES or last.startswith("_"):
            return False
        if path_matches(path, OWNED_BY_OTHER_CHECKS) or self._torch_call_allowed(path):
            return False
        return len(path.split(".")) == 2 or path.startswith(("torch.nn.functional.",
                                                             "torch.special.", "torch.linalg.",
                                                             "torch.fft.", "torch.Tensor."))

    def _torch_call_allowed(self, path):
        if self.allow.allows_cpp(path):   # also accepts the at:: spelling
            return True
        if path in ALLOWED_TORCH_CALLS:
            return True
        if path.startswith("torch.Tensor."):
            return path.split(".")[-1] in TENSOR_ALLOWED_METHODS
        if path.startswith("torch.ops."):
            parts = path.split(".")
            return len(parts) > 2 and parts[2] not in ATEN_OP_NAMESPACES
        if path.startswith("torch.utils.cpp_extension."):
            return True
        return False

    def _tensor_method(self, m, e, arg_tags, kw_tags, reach, known):
        if m in PRECISION_METHODS:
            return T   # precision is reported module-wide; the cast itself is layout
        if m == "to":
            return T
        if m in TENSOR_META_METHODS:
            return N
        if m in TENSOR_LAYOUT_METHODS:
            return T
        if self.allow.allows_method(m):
            return T
        if m.startswith("__") and m.endswith("__") and m not in ("__init__",):
            if reach and (known or m in ("__add__", "__mul__", "__matmul__", "__sub__",
                                         "__truediv__", "__pow__", "__neg__", "__getitem__",
                                         "__setitem__", "__iadd__", "__imul__", "__radd__",
                                         "__rmul__", "__rmatmul__", "__and__", "__or__")):
                self._compute(e, f"calls tensor dunder {m}()")
            return T if known else EMPTY
        if known or m in COMPUTE_METHODS:
            if reach:
                what = "tensor" if known else "value that may be a tensor"
                self._compute(e, f"calls .{m}() on a {what} (an ATen kernel)")
            return T
        return EMPTY

    def _builtin(self, info, name, e, arg_tags, kw_tags, reach):
        anyt = any(("T" in t or "L" in t) for t in arg_tags)
        if name in BUILTIN_MATH:
            if anyt:
                if reach:
                    self._compute(e, f"builtin {name}() over tensors dispatches to torch")
                return T
            return N
        if name in ("len", "int", "float", "bool", "str", "isinstance", "issubclass", "range",
                    "hash", "id", "repr", "print", "callable", "hasattr", "ord", "chr", "format"):
            return N
        if name in ("list", "tuple", "sorted", "reversed", "iter", "set", "frozenset"):
            return frozenset({"L"}) if anyt else N
        if name == "next":
            return self._elem(arg_tags[0]) if arg_tags else EMPTY
        if name == "super":
            cls = info.cls
            if cls is None and e.args and isinstance(e.args[0], ast.Name):
                cls = e.args[0].id
            if e.args and isinstance(e.args[0], ast.Name) and e.args[0].id in self.classes:
                cls = e.args[0].id
            return frozenset({f"SUPER:{cls}"}) if cls else EMPTY
        if name == "getattr" and len(e.args) >= 2:
            name_node = e.args[1]
            if isinstance(name_node, ast.Constant) and isinstance(name_node.value, str):
                return self._attr(info, e, arg_tags[0], name_node.value, reach)
            folded = self.const_str(name_node)
            if folded is not None:
                return self._attr(info, e, arg_tags[0], folded, reach)
            # A name chosen at run time: any attribute of the object.
            base = arg_tags[0]
            if reach and ("T" in base or "M" in base):
                self._compute(e, "getattr() with a computed name on a tensor or module")
            if any(t.startswith("P:torch") for t in base):
                return frozenset({"P:torch.<computed>"})
            return EMPTY
        if name in ("staticmethod", "classmethod", "property") and arg_tags:
            return arg_tags[0]
        if name in ("map", "filter") and e.args:
            return frozenset({"L"}) if any("T" in t or "L" in t for t in arg_tags[1:]) else EMPTY
        if name in ("enumerate", "zip"):
            return frozenset({"L"}) if anyt else N
        return EMPTY


def _op(op) -> str:
    return {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
            ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
            ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^", ast.USub: "-", ast.UAdd: "+",
            ast.Invert: "~", ast.Not: "not"}.get(type(op), type(op).__name__)


# ----------------------------------------------------------------------------
# Python: module-wide checks


class PythonChecker:
    def __init__(self, source: str, allow: AllowList, fmt: str, precision: bool = True):
        self.source = source
        self.allow = allow
        self.fmt = fmt
        self.precision = precision
        self.f = FindingSet()
        self.parse_error = None

    def run(self):
        try:
            tree = ast.parse(self.source)
        except SyntaxError as exc:
            self.parse_error = f"{exc.msg} (line {exc.lineno})"
            self.f.add("syntax_error", f"Python does not parse: {exc.msg}", exc.lineno or 0)
            return
        except ValueError as exc:
            self.parse_error = str(exc)
            self.f.add("syntax_error", f"Python does not parse: {exc}", 0)
            return
        self.tree = tree
        self.parents = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
        self._collect_names()
        self._imports()
        self._references()
        self._assignments()
        self._calls()
        self._classes_and_defs()
        self._try_blocks()
        self._modelnew()
        ForwardAnalysis(tree, self.f, self.allow, self.precision, self.paths,
                        self._const_str).run()

    # -- name tables --------------------------------------------------------------
    def _collect_names(self):
        self.imports: dict[str, set] = {}
        self.aliases: dict[str, list] = {}
        self.bound: set[str] = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.imports.setdefault(a.asname, set()).add(a.name)
                    else:
                        root = a.name.split(".")[0]
                        self.imports.setdefault(root, set()).add(root)
            elif isinstance(node, ast.ImportFrom):
                mod = ("." * node.level) + (node.module or "")
                for a in node.names:
                    if a.name != "*":
                        self.imports.setdefault(a.asname or a.name, set()).add(
                            f"{mod}.{a.name}" if mod else a.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    self._alias_target(t, node.value)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bound.add(node.name)
            elif isinstance(node, ast.arg):
                self.bound.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.bound.add(node.id)
            elif isinstance(node, ast.alias):
                self.bound.add((node.asname or node.name).split(".")[0])

    def _alias_target(self, t, value):
        if value is None:
            return
        if isinstance(t, ast.Name):
            self.aliases.setdefault(t.id, []).append(value)
        elif isinstance(t, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(t.elts) == len(value.elts):
            for a, b in zip(t.elts, value.elts):
                self._alias_target(a, b)

    def paths(self, node, _seen=None) -> set:
        """Dotted names an expression may denote through imports and simple aliases."""
        seen = _seen if _seen is not None else set()
        if isinstance(node, ast.Name):
            out = set(self.imports.get(node.id, ()))
            if node.id not in seen:
                seen.add(node.id)
                for v in self.aliases.get(node.id, ()):
                    if isinstance(v, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
                        out |= self.paths(v, seen)
                seen.discard(node.id)
            return out
        if isinstance(node, ast.Attribute) and node.attr == "__class__" and isinstance(
                node.value, ast.Call) and self._returns_stream(node.value, seen):
            return {"torch.cuda.Stream"}
        if isinstance(node, ast.Attribute):
            return {f"{p}.{node.attr}" for p in self.paths(node.value, seen)}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            fn = node.func.id
            # type(torch.cuda.current_stream()) is the stream class: calling it
            # makes a new stream without naming any stream API.
            if fn == "type" and fn not in self.bound and len(node.args) == 1 and isinstance(
                    node.args[0], ast.Call) and self._returns_stream(node.args[0], seen):
                return {"torch.cuda.Stream"}
            if fn == "getattr" and len(node.args) >= 2 and fn not in self.bound:
                name = self._const_str(node.args[1])
                if name is not None:
                    return {f"{p}.{name}" for p in self.paths(node.args[0], seen)}
            if fn == "__import__" and node.args:
                name = self._const_str(node.args[0])
                if name is not None:
                    return {name.split(".")[0]}
        if isinstance(node, ast.Call) and node.args:
            fp = self.paths(node.func, seen)
            if "importlib.import_module" in fp:
                name = self._const_str(node.args[0])
                if name is not None:
                    return {name}
        if isinstance(node, ast.Subscript):
            base = self.paths(node.value, seen)
            key = self._const_str(node.slice)
            if key is not None and ("sys.modules" in base):
                return {key}
        return set()

    def _returns_stream(self, call, seen):
        return any(path_matches(p, STREAM_RETURNING) for p in self.paths(call.func, seen))

    def _const_str(self, node):
        try:
            alts = StringResolver(self.tree).resolve(node) if not isinstance(
                node, ast.Constant) else [[(node.value, 0, False)]] if isinstance(node.value, str) \
                else None
        except _Unresolved:
            return None
        if not alts or len(alts) != 1:
            return None
        return "".join(s for s, *_ in alts[0])

    def add(self, check, detail, node):
        self.f.add(check, detail, getattr(node, "lineno", 0))

    # -- imports -------------------------------------------------------------------
    def _imports(self):
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    self.add("reference_reuse", "relative import (the reference or harness "
                             "could be reached)", node)
                    continue
                base = node.module or ""
                mods = []
                for a in node.names:
                    if a.name == "*":
                        self.add("opaque_code", f"from {base} import * hides which names are "
                                 "used", node)
                        mods.append(base)
                    else:
                        mods.append(f"{base}.{a.name}")
                    if a.name in ("Model", "get_inputs", "get_init_inputs"):
                        self.add("reference_reuse", f"imports {a.name} from {base}", node)
            else:
                continue
            for mod in mods:
                r = classify_module_import(mod, self.allow)
                if r is None and isinstance(node, ast.ImportFrom):
                    r = classify_module_import(node.module or "", self.allow)
                if r is not None:
                    self.add(r[0], r[1], node)
                    if r[0] == "unexpected_import" and mod.split(".")[0] in (
                            "reference", "task", "model", "kforge_harness", "kernelbench"):
                        self.add("reference_reuse", f"imports {mod}, which may be the "
                                 "reference or the harness", node)

    # -- name references ------------------------------------------------------------
    def _references(self):
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute):
                parent = self.parents.get(id(node))
                if isinstance(parent, ast.Attribute) and parent.value is node:
                    continue   # classify the longest chain only
                paths = self.paths(node)
                if node.attr in INTROSPECTION_ATTRS:
                    self.add("opaque_code", f"introspection attribute {node.attr}", node)
                if node.attr == "__dict__" and paths | self.paths(node.value):
                    self.add("opaque_code", "module __dict__ access reaches names by computed key",
                             node)
                if node.attr in ("as_subclass", "_make_subclass", "_make_wrapper_subclass"):
                    self.add("tensor_subclass", f".{node.attr}() gives a tensor a custom class",
                             node)
                if node.attr in ("__setattr__", "__delattr__") and isinstance(
                        parent, ast.Call) and parent.func is node:
                    self.add("monkey_patch", f"calls {node.attr} directly", node)
                if node.attr in PRECISION_METHODS and isinstance(parent, ast.Call) and \
                        parent.func is node and self.precision:
                    self.add("precision_downcast", f".{node.attr}() casts to a reduced precision",
                             node)
                if node.attr == "Model" and paths:
                    self.add("reference_reuse", f"reaches {sorted(paths)[0]}", node)
                for p in sorted(paths):
                    self._classify_path(p, node)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Call):
                # f(...)(...): what the inner call returns is called, e.g.
                # type(torch.cuda.current_stream())().
                for p in sorted(self.paths(node.func)):
                    if "." in p:
                        self._classify_path(p, node)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                for p in sorted(self.paths(node)):
                    if "." in p:
                        self._classify_path(p, node)
                if node.id == "Model" and not self._inside_class(node, "Model"):
                    self.add("reference_reuse", "refers to the reference class Model", node)
                if node.id in DANGEROUS_BUILTINS and node.id not in self.bound:
                    check, why = DANGEROUS_BUILTINS[node.id]
                    self.add(check, why, node)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    self.precision:
                parent = self.parents.get(id(node))
                if node.value in ("float16", "half", "bfloat16", "fp16", "bf16") and isinstance(
                        parent, ast.keyword) and parent.arg == "dtype":
                    self.add("precision_downcast", f"dtype='{node.value}'", node)

    def _inside_class(self, node, cname):
        cur = self.parents.get(id(node))
        while cur is not None:
            if isinstance(cur, ast.ClassDef) and cur.name == cname:
                return True
            cur = self.parents.get(id(cur))
        return False

    def _classify_path(self, p, node):
        hit = path_matches(p, COMPILE_PATHS)
        if hit:
            self.add("torch_compile", f"uses {p}", node)
            return
        if path_matches(p, GRAPH_PATHS):
            self.add("cuda_graph", f"uses {p}", node)
            return
        if path_matches(p, STREAM_PATHS):
            self.add("stream_creation", f"uses {p}", node)
            return
        if path_matches(p, THREAD_PATHS):
            self.add("threading", f"uses {p}", node)
            return
        if path_matches(p, SUBCLASS_PATHS):
            self.add("tensor_subclass", f"uses {p}", node)
            return
        if path_matches(p, FFI_PATHS):
            self.add("ctypes_dlopen", f"uses {p} (loads native code)", node)
            return
        if path_matches(p, FILE_PATHS):
            self.add("file_env_network", f"uses {p}", node)
            return
        if path_matches(p, REFERENCE_INTROSPECTION):
            self.add("reference_reuse", f"uses {p}, which can reach the reference model or its "
                     "outputs", node)
            return
        stored = isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del))
        if self.precision and path_matches(p, PRECISION_PATHS):
            self.add("precision_downcast", f"uses {p}", node)
        if p.startswith("torch.backends.") and p.split(".")[-1] in PRECISION_FLAGS_ATTRS \
                and self.precision and not stored:
            self.add("precision_downcast", f"uses {p}", node)
        root = p.split(".")[0]
        if root == "os" and p not in OS_ALLOWED and not p.startswith("os.path.join"):
            last = p.split(".")[-1]
            if last in OS_PROCESS:
                self.add("threading", f"uses {p} (new processes)", node)
            else:
                self.add("file_env_network", f"uses {p}", node)
            return
        if root == "torch" and is_private_torch(p):
            self.add("opaque_code", f"uses private torch internals {p}", node)
            return
        if p.startswith("torch.library.") or p == "torch.library":
            parent = self.parents.get(id(node))
            if isinstance(parent, ast.Call) and any(
                    isinstance(a, ast.Constant) and isinstance(a.value, str) and
                    a.value.split("::")[0] in ATEN_OP_NAMESPACES for a in parent.args):
                self.add("monkey_patch", f"{p} on an ATen namespace overrides PyTorch's own "
                         "operators", node)

    # -- assignments (monkey patching) ------------------------------------------------------
    def _assignments(self):
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Delete):
                targets = node.targets
            else:
                continue
            for t in targets:
                for sub in self._flatten_targets(t):
                    self._check_target(sub, node)

    def _flatten_targets(self, t):
        if isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                yield from self._flatten_targets(e)
        elif isinstance(t, ast.Starred):
            yield from self._flatten_targets(t.value)
        else:
            yield t

    def _check_target(self, t, stmt):
        if isinstance(t, ast.Attribute):
            if t.attr == "__class__":
                self.add("tensor_subclass", "assigns __class__ (swaps an object's type)", t)
                return
            base_paths = self.paths(t.value)
            if isinstance(t.value, ast.Name) and t.value.id == "Model":
                self.add("reference_reuse", f"modifies the reference class (Model.{t.attr})", t)
                return
            if base_paths:
                p = sorted(base_paths)[0]
                self.add("monkey_patch", f"assigns {p}.{t.attr}", t)
                if self.precision and t.attr in PRECISION_FLAGS_ATTRS:
                    val = getattr(stmt, "value", None)
                    if not (isinstance(val, ast.Constant) and val.value in (False, "ieee",
                                                                           "highest")):
                        self.add("precision_downcast", f"enables {p}.{t.attr}", t)
                return
            if isinstance(t.value, ast.Name) and t.value.id == "__builtins__":
                self.add("monkey_patch", "assigns into __builtins__", t)
        elif isinstance(t, ast.Subscript):
            base_paths = self.paths(t.value)
            if isinstance(t.value, ast.Attribute) and t.value.attr == "__dict__" or base_paths:
                p = sorted(base_paths)[0] if base_paths else ast.unparse(t.value)
                if p in ("os.environ",):
                    return   # reported by the reference rule
                self.add("monkey_patch", f"assigns an item of {p}", t)
            elif isinstance(t.value, ast.Call) and isinstance(t.value.func, ast.Name) and \
                    t.value.func.id in ("globals", "vars", "locals"):
                self.add("opaque_code", f"assigns through {t.value.func.id}()", t)
            elif isinstance(t.value, ast.Name) and t.value.id == "__builtins__":
                self.add("monkey_patch", "assigns into __builtins__", t)
        elif isinstance(t, ast.Name) and t.id == "__builtins__":
            self.add("monkey_patch", "rebinds __builtins__", t)
        elif isinstance(t, ast.Name) and t.id == "ModelNew":
            v = getattr(stmt, "value", None)
            if isinstance(v, ast.Name) and v.id == "Model":
                self.add("reference_reuse", "ModelNew is the reference class", t)

    # -- calls --------------------------------------------------------------------------
    def _calls(self):
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Call):
                continue
            fpaths = self.paths(node.func)
            fname = node.func.id if isinstance(node.func, ast.Name) else None
            if fname in ("getattr", "setattr", "delattr", "hasattr") and \
                    fname not in self.bound and len(node.args) >= 2:
                obj_paths = self.paths(node.args[0])
                name_node = node.args[1]
                literal = isinstance(name_node, ast.Constant) and isinstance(name_node.value, str)
                if obj_paths and not literal:
                    resolved = self._const_str(name_node)
                    self.add("opaque_code", f"{fname}() on {sorted(obj_paths)[0]} with a "
                             f"computed attribute name" + (f" ('{resolved}')" if resolved else ""),
                             node)
                    if resolved:
                        for p in sorted(obj_paths):
                            self._classify_path(f"{p}.{resolved}", node)
                if fname in ("setattr", "delattr"):
                    if obj_paths:
                        self.add("monkey_patch", f"{fname}() on {sorted(obj_paths)[0]}", node)
                    elif isinstance(node.args[0], ast.Name) and node.args[0].id == "Model":
                        self.add("reference_reuse", f"{fname}() on the reference class", node)
                    if literal and name_node.value == "__class__":
                        self.add("tensor_subclass", "setattr(..., '__class__', ...)", node)
                if literal and name_node.value == "Model":
                    self.add("reference_reuse", "getattr(..., 'Model')", node)
            if fname == "type" and fname not in self.bound and len(node.args) == 3:
                self.add("opaque_code", "type() with three arguments builds a class at run time",
                         node)
            for p in sorted(fpaths):
                if path_matches(p, GLOBAL_SETTERS) and not path_matches(p, THREAD_PATHS):
                    self.add("monkey_patch", f"calls {p} (changes process-wide torch state)",
                             node)
                    if p == "torch.set_float32_matmul_precision" and self.precision:
                        arg = node.args[0] if node.args else None
                        if not (isinstance(arg, ast.Constant) and arg.value == "highest"):
                            self.add("precision_downcast", "lowers float32 matmul precision", node)
                if p == "contextlib.suppress":
                    self.add("try_fallback", "contextlib.suppress swallows errors", node)
                if p == LOAD_INLINE:
                    self._load_inline(node)
                if p in ("torch.utils.cpp_extension.load",):
                    self._extension_flags(node, {})

    # -- load_inline ----------------------------------------------------------------------
    def _load_inline(self, call):
        args = {}
        for k, a in enumerate(call.args):
            if isinstance(a, ast.Starred):
                self.add("opaque_code", "load_inline(*args) hides its arguments", call)
                continue
            if k < len(LOAD_INLINE_POSITIONAL):
                args[LOAD_INLINE_POSITIONAL[k]] = a
        for kw in call.keywords:
            if kw.arg is None:
                d = kw.value
                if isinstance(d, ast.Name) and len(self.aliases.get(d.id, [])) == 1:
                    d = self.aliases[d.id][0]
                if isinstance(d, ast.Dict):
                    for key, val in zip(d.keys, d.values):
                        if isinstance(key, ast.Constant) and isinstance(key.value, str):
                            args[key.value] = val
                        else:
                            self.add("opaque_code", "load_inline(**kwargs) with computed keys",
                                     call)
                else:
                    self.add("opaque_code", "load_inline(**kwargs) hides its arguments", call)
            else:
                args[kw.arg] = kw.value
        resolver = StringResolver(self.tree)
        with_cuda = args.get("cuda_sources") is not None
        for key in ("cpp_sources", "cuda_sources", "sycl_sources"):
            node = args.get(key)
            if node is None or (isinstance(node, ast.Constant) and node.value is None):
                continue
            try:
                alts = resolver.resolve(node)
            except _Unresolved as exc:
                self.add("opaque_code", f"load_inline {key} cannot be read statically ({exc})",
                         node)
                continue
            for segs in alts:
                text = "".join(s for s, *_ in segs)
                scanner = CppScanner(self.f, self.allow, native=False,
                                     line_map=segments_line_map(segs), where=key)
                scanner.scan(text, precision=self.precision)
        self._extension_flags(call, args, with_cuda)

    def _extension_flags(self, call, args, with_cuda=False):
        if not args:
            for kw in call.keywords:
                if kw.arg:
                    args[kw.arg] = kw.value
        resolver = StringResolver(self.tree)

        def strings(key):
            node = args.get(key)
            if node is None or (isinstance(node, ast.Constant) and node.value is None):
                return []
            try:
                alts = resolver.resolve(node)
            except _Unresolved as exc:
                self.add("opaque_code", f"{key} cannot be read statically ({exc})", node)
                return []
            out = []
            for segs in alts:
                for s, *_ in segs:
                    if s != "\n":
                        out.append(s)
            return out

        if args.get("build_directory") is not None and not (
                isinstance(args["build_directory"], ast.Constant) and
                args["build_directory"].value is None):
            self.add("file_env_network", "build_directory= builds or reuses objects outside "
                     "kforge's compile cache", args["build_directory"])
        if strings("extra_include_paths"):
            self.add("unexpected_import", "extra_include_paths= reads headers from outside the "
                     "candidate", args["extra_include_paths"])
        for key in ("extra_cflags", "extra_cuda_cflags", "extra_sycl_cflags"):
            flags = []
            for s in strings(key):
                for part in s.split():
                    flags += [x for x in re.split(r"[,=]", part) if x] if part.startswith(
                        ("-Xcompiler", "--compiler-options")) else [part]
            prev = ""
            for fl in flags:
                if self.precision and (fl in FAST_MATH_FLAGS or fl.replace("-", "") in {
                        x.replace("-", "") for x in FAST_MATH_FLAGS}):
                    self.add("precision_downcast", f"{key} has {fl}", args[key])
                if fl.startswith(HEADER_INJECT_FLAGS) and not fl.startswith(("-Ofast",)):
                    self.add("unexpected_import", f"{key} has {fl} (headers from outside the "
                             "candidate)", args[key])
                if "per-thread" in fl and ("default-stream" in prev or "default-stream" in fl):
                    self.add("stream_creation", f"{key} makes the default stream per-thread",
                             args[key])
                if fl.startswith(("-fplugin", "-load", "--wrap", "-Wl,--wrap", "-Xlinker")):
                    self.add("monkey_patch", f"{key} has {fl}", args[key])
                prev = fl
        for s in strings("extra_ldflags"):
            for fl in s.split():
                if fl.startswith("-l"):
                    lib = fl[2:].lstrip(":")
                    if lib not in LINKABLE_LIBS and not self.allow.allows(lib):
                        self.add("ctypes_dlopen", f"extra_ldflags links {fl}", args["extra_ldflags"])
                elif fl.startswith("-L") or "/" in fl or fl.endswith((".so", ".a", ".o")):
                    self.add("ctypes_dlopen", f"extra_ldflags links code from outside the "
                             f"candidate ({fl})", args["extra_ldflags"])
                elif "--wrap" in fl or "--defsym" in fl or "-rpath" in fl:
                    self.add("monkey_patch" if "rpath" not in fl else "ctypes_dlopen",
                             f"extra_ldflags has {fl}", args["extra_ldflags"])

    # -- class and function definitions ----------------------------------------------------
    def _classes_and_defs(self):
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ClassDef):
                for b in node.bases:
                    bp = self.paths(b)
                    if isinstance(b, ast.Name) and b.id == "Model":
                        pass   # reported as a name reference
                    if any(path_matches(p, ["torch.Tensor", "torch._C.TensorBase",
                                            "torch._C._TensorBase", "torch.nn.Parameter"])
                           for p in bp):
                        self.add("tensor_subclass", f"class {node.name} subclasses a tensor type",
                                 node)
                    if node.name == "ModelNew" and any(
                            p.startswith("torch.nn.") and p not in ("torch.nn.Module",)
                            for p in bp):
                        self.add("torch_compute", f"ModelNew inherits from {sorted(bp)[0]} and "
                                 "with it PyTorch's forward", node)
                for kw in node.keywords:
                    if kw.arg == "metaclass":
                        self.add("opaque_code", f"class {node.name} uses a metaclass", node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.name in ("__torch_function__", "__torch_dispatch__"):
                    self.add("tensor_subclass", f"defines {node.name} (intercepts torch calls)",
                             node)

    # -- try/except ----------------------------------------------------------------------
    def _try_blocks(self):
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                if not node.handlers:
                    continue
                if all(all(isinstance(s, ast.Raise) for s in h.body) for h in node.handlers):
                    continue
                what = []
                for h in node.handlers:
                    for sub in ast.walk(h):
                        if isinstance(sub, ast.Call):
                            for p in sorted(self.paths(sub.func)):
                                if p.startswith("torch."):
                                    what.append(p)
                            if isinstance(sub.func, ast.Name) and sub.func.id == "Model":
                                what.append("Model")
                extra = f"; the handler calls {', '.join(sorted(set(what))[:3])}" if what else ""
                self.add("try_fallback", "try/except carries on after an error (a fallback path "
                         f"can hide a failing kernel){extra}", node)

    def _modelnew(self):
        if self.fmt not in ("kernelbench", "cpp"):
            return
        for node in self.tree.body:
            if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
                return
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == "ModelNew" for t in targets):
                    return
            if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    (a.asname or a.name) == "ModelNew" for a in node.names):
                return
        self.add("missing_modelnew", "the candidate defines no class ModelNew", None)


# ----------------------------------------------------------------------------
# Entry points

def task_is_low_precision(task_source: str) -> bool:
    """True when the task itself works in fp16/bf16 (then casts are expected)."""
    try:
        tree = ast.parse(task_source)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("float16", "half", "bfloat16"):
            return True
        if isinstance(node, ast.Constant) and node.value in ("float16", "bfloat16", "half"):
            return True
    return False


def check_source(source: str, fmt: str = "kernelbench", allow=(), filename: str = "",
                 precision: bool = True) -> dict:
    """Runs every static check on one candidate's source text."""
    allow_list = AllowList(allow)
    is_python = fmt == "kernelbench" or (fmt == "cpp" and not filename.endswith(
        (".cpp", ".cc", ".cxx", ".cu", ".cuh", ".h", ".hpp")))
    if is_python:
        pc = PythonChecker(source, allow_list, fmt, precision)
        pc.run()
        return {"findings": [f.to_json() for f in pc.f.sorted()], "parse_error": pc.parse_error}
    fs = FindingSet()
    CppScanner(fs, allow_list, native=(fmt == "native")).scan(source, precision=precision)
    return {"findings": [f.to_json() for f in fs.sorted()], "parse_error": None}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m kforge_harness.static_check",
                                 description="Static integrity checks of a kforge candidate.")
    ap.add_argument("--format", choices=("kernelbench", "native", "cpp"), required=True)
    ap.add_argument("--allow", action="append", default=[], metavar="NAME",
                    help="dotted name the torch_compute/library_compute/unexpected_import "
                         "checks accept (repeatable)")
    ap.add_argument("--task", help="task file; when it works in fp16/bf16, casts to those "
                                   "types are not reported")
    ap.add_argument("file")
    try:
        args = ap.parse_args(argv)
    except SystemExit as exc:
        return 2 if exc.code else 0
    try:
        with open(args.file, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        print(f"static_check: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    precision = True
    if args.task:
        try:
            with open(args.task, encoding="utf-8", errors="replace") as fh:
                precision = not task_is_low_precision(fh.read())
        except OSError as exc:
            print(f"static_check: cannot read {args.task}: {exc.strerror}", file=sys.stderr)
            return 2
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        out = {"findings": [{"check": "syntax_error", "detail": "source is not UTF-8",
                             "line": raw[:exc.start].count(b"\n") + 1}],
               "parse_error": f"not UTF-8: {exc.reason}"}
        print(json.dumps(out))
        return 0
    out = check_source(source, args.format, args.allow, args.file, precision)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
