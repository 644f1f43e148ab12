#include "run/native_export.h"

#include <fmt/format.h>

#include <map>

#include "common/hash.h"

namespace kforge::run {

namespace {

// True for a line that includes kforge_native.h ("..." or <...>), nothing
// but blanks or a comment after it.
bool IncludesAbiHeader(std::string_view line) {
  size_t i = 0;
  auto skip_blanks = [&] {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  };
  auto take = [&](std::string_view word) {
    if (line.substr(i, word.size()) != word) return false;
    i += word.size();
    return true;
  };
  skip_blanks();
  if (!take("#")) return false;
  skip_blanks();
  if (!take("include")) return false;
  skip_blanks();
  if (i >= line.size() || (line[i] != '"' && line[i] != '<')) return false;
  const char close = line[i] == '"' ? '"' : '>';
  ++i;
  if (!take("kforge_native.h")) return false;
  if (i >= line.size() || line[i] != close) return false;
  ++i;
  skip_blanks();
  if (i < line.size() && line[i] == '\r') ++i;
  return i == line.size() || line.substr(i, 2) == "//" || line.substr(i, 2) == "/*";
}

// A file name fit for a #line directive.
std::string LineDirectiveName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '"' || c == '\\' || c == '\n' || c == '\r') continue;
    out += c;
  }
  return out.empty() ? "candidate.cu" : out;
}

// Length of the valid UTF-8 sequence at text[i], or 0 when there is none.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned min = 0;
  unsigned cp = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2, min = 0x80, cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, min = 0x800, cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, min = 0x10000, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t n = Utf8SequenceLength(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool EndsWith(std::string_view text, char c) {
  return !text.empty() && text.back() == c;
}

std::string Substitute(std::string_view templ, const std::map<std::string, std::string>& values) {
  std::string out;
  size_t i = 0;
  while (i < templ.size()) {
    size_t at = templ.find('@', i);
    if (at == std::string_view::npos) break;
    size_t end = templ.find('@', at + 1);
    if (end == std::string_view::npos) break;
    auto it = values.find(std::string(templ.substr(at + 1, end - at - 1)));
    if (it == values.end()) {  // not a placeholder: keep the '@' and go on after it
      out.append(templ.substr(i, at + 1 - i));
      i = at + 1;
      continue;
    }
    out.append(templ.substr(i, at - i));
    out += it->second;
    i = end + 1;
  }
  out.append(templ.substr(i));
  return out;
}

// load_inline's cpp_sources: it puts `#include <torch/extension.h>` first.
constexpr std::string_view kBindingTemplate =
    R"binding(// kforge native binding: torch::Tensor lists -> kf_call -> kforge_forward
// (docs/candidate-formats.md). The candidate itself is in the CUDA source.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <cstdint>
#include <cstring>
#include <vector>

@ABI_HEADER@
// Optional in a candidate (kforge_abi_version is required, but a missing one
// should be a clear error, not an undefined symbol): weak, null when absent.
extern "C" __attribute__((weak)) size_t kforge_workspace_bytes(const kf_call* call);
extern "C" __attribute__((weak)) int32_t kforge_abi_version(void);

namespace {

int32_t KfDtype(const at::Tensor& t, const char* role, size_t index) {
  switch (t.scalar_type()) {
    case at::kFloat: return KF_FLOAT32;
    case at::kHalf: return KF_FLOAT16;
    case at::kBFloat16: return KF_BFLOAT16;
    case at::kDouble: return KF_FLOAT64;
    case at::kChar: return KF_INT8;
    case at::kByte: return KF_UINT8;
    case at::kShort: return KF_INT16;
    case at::kInt: return KF_INT32;
    case at::kLong: return KF_INT64;
    case at::kBool: return KF_BOOL;
    default: break;
  }
  TORCH_CHECK(false, "kforge native ABI: ", role, " ", index, " has dtype ", t.scalar_type(),
              ", which has no kf_dtype code");
  return -1;
}

std::vector<kf_tensor> KfTensors(const std::vector<at::Tensor>& tensors, const char* role,
                                 const c10::Device& device) {
  std::vector<kf_tensor> out(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const at::Tensor& t = tensors[i];
    TORCH_CHECK(t.defined(), "kforge native ABI: ", role, " ", i, " is an undefined tensor");
    TORCH_CHECK(t.is_cuda() && t.device() == device, "kforge native ABI: ", role, " ", i,
                " is on ", t.device(), "; every tensor of the call must be on ", device);
    TORCH_CHECK(t.dim() <= KFORGE_MAX_DIMS, "kforge native ABI: ", role, " ", i, " has ",
                t.dim(), " dimensions; the ABI allows at most ", KFORGE_MAX_DIMS);
    kf_tensor& k = out[i];
    std::memset(&k, 0, sizeof k);
    k.data = t.data_ptr();
    k.dtype = KfDtype(t, role, i);
    k.ndim = static_cast<int32_t>(t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      k.shape[d] = t.size(d);
      k.strides[d] = t.stride(d);  // in elements, as the ABI counts them
    }
  }
  return out;
}

// The call block and the arrays it points into.
struct Call {
  std::vector<kf_tensor> inputs, params, outputs;
  std::vector<double> scalars;
  kf_call call;
};

// The one CUDA device every tensor of the call is on (Fill checks the rest).
c10::Device CallDevice(const std::vector<at::Tensor>& inputs,
                       const std::vector<at::Tensor>& outputs,
                       const std::vector<at::Tensor>& params) {
  for (const auto* list : {&inputs, &outputs, &params}) {
    if (list->empty() || !(*list)[0].defined()) continue;
    const c10::Device device = (*list)[0].device();
    TORCH_CHECK(device.is_cuda(), "kforge native ABI: the call's tensors are on ", device,
                "; a native candidate runs on a CUDA device");
    return device;
  }
  TORCH_CHECK(false, "kforge native ABI: a call with no tensors");
  return c10::Device(c10::kCUDA);
}

void Fill(Call& c, const std::vector<at::Tensor>& inputs, const std::vector<double>& scalars,
          const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& outputs,
          const c10::Device& device) {
  c.inputs = KfTensors(inputs, "input", device);
  c.params = KfTensors(params, "parameter", device);
  c.outputs = KfTensors(outputs, "output", device);
  for (size_t i = 0; i < outputs.size(); ++i) {
    TORCH_CHECK(outputs[i].is_contiguous(), "kforge native ABI: output ", i, " is not contiguous");
  }
  c.scalars = scalars;
  std::memset(&c.call, 0, sizeof c.call);
  c.call.inputs = c.inputs.data();
  c.call.num_inputs = static_cast<int32_t>(c.inputs.size());
  c.call.scalars = c.scalars.data();
  c.call.num_scalars = static_cast<int32_t>(c.scalars.size());
  c.call.params = c.params.data();
  c.call.num_params = static_cast<int32_t>(c.params.size());
  c.call.outputs = c.outputs.data();
  c.call.num_outputs = static_cast<int32_t>(c.outputs.size());
  c.call.stream = static_cast<void*>(at::cuda::getCurrentCUDAStream(device.index()).stream());
  c.call.workspace = nullptr;
  c.call.workspace_bytes = 0;
}

// kforge_forward on the current stream of the tensors' device. `workspace`:
// kforge_workspace_bytes() bytes of device memory, or an empty tensor (NULL).
void Forward(const std::vector<at::Tensor>& inputs, const std::vector<double>& scalars,
             const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& outputs,
             const at::Tensor& workspace) {
  const c10::Device device = CallDevice(inputs, outputs, params);
  c10::cuda::CUDAGuard guard(device);
  Call c;
  Fill(c, inputs, scalars, params, outputs, device);
  if (workspace.defined() && workspace.numel() > 0) {
    TORCH_CHECK(workspace.is_cuda() && workspace.device() == device,
                "kforge native ABI: the workspace is on ", workspace.device(), ", not ", device);
    c.call.workspace = workspace.data_ptr();
    c.call.workspace_bytes = workspace.nbytes();
  }
  const int32_t rc = kforge_forward(&c.call);
  TORCH_CHECK(rc == 0, "kforge_forward returned ", rc);
}

bool HasWorkspaceBytes() { return kforge_workspace_bytes != nullptr; }

// kforge_workspace_bytes for these tensors (outputs allocated, not to be
// read); 0 when the candidate does not export it.
int64_t WorkspaceBytes(const std::vector<at::Tensor>& inputs, const std::vector<double>& scalars,
                       const std::vector<at::Tensor>& params,
                       const std::vector<at::Tensor>& outputs) {
  if (kforge_workspace_bytes == nullptr) return 0;
  const c10::Device device = CallDevice(inputs, outputs, params);
  c10::cuda::CUDAGuard guard(device);
  Call c;
  Fill(c, inputs, scalars, params, outputs, device);
  return static_cast<int64_t>(kforge_workspace_bytes(&c.call));
}

// The ABI version the candidate was written against; -1 when it exports none.
int64_t AbiVersion() { return kforge_abi_version != nullptr ? kforge_abi_version() : -1; }

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("forward", &Forward, "kforge_forward(inputs, scalars, params, outputs, workspace)");
  m.def("workspace_bytes", &WorkspaceBytes,
        "kforge_workspace_bytes(inputs, scalars, params, outputs)");
  m.def("has_workspace_bytes", &HasWorkspaceBytes,
        "whether the candidate exports kforge_workspace_bytes");
  m.def("abi_version", &AbiVersion, "kforge_abi_version(), or -1 when not exported");
}
)binding";

constexpr std::string_view kModelNewTemplate =
    R"py(@HEADER_COMMENT@"""A PyTorch module around a native kforge candidate (docs/candidate-formats.md).

The candidate is CUDA written against the kforge C ABI (version 1), not a
PyTorch module. `ModelNew(*init_args)` builds the task's reference `Model` as
its submodule `model`: the weights, state_dict(), .to() and .cuda() are the
reference's. `forward(*inputs)` takes what the task's get_inputs() returns,
allocates the outputs (shapes and dtypes from running the reference on meta
tensors, once per input signature) and calls the candidate's kforge_forward on
the current CUDA stream, through a small extension that
torch.utils.cpp_extension.load_inline builds on the first forward (it needs
nvcc and a CUDA GPU; the build is cached under TORCH_EXTENSIONS_DIR).
Inference only: the outputs carry no autograd history.
"""
import copy
import os
import threading

import torch
from torch.utils import cpp_extension

__all__ = ["ModelNew"]

_ABI_VERSION = 1
_TASK_NAME = @TASK_NAME@
_SOURCE_NAME = @SOURCE_NAME@
_EXTENSION_NAME = @EXTENSION_NAME@

# The task, as the run recorded it. It runs in a namespace of its own: `Model`
# comes from there; its get_inputs(), sizes and imports stay there.
_TASK_SOURCE = @TASK_SOURCE@

# The candidate (_SOURCE_NAME), its include of the ABI header replaced by the
# header's text.
_CUDA_SOURCE = @CUDA_SOURCE@

# torch::Tensor lists -> kf_call -> kforge_forward (after load_inline's
# implicit torch/extension.h).
_BINDING_SOURCE = @BINDING_SOURCE@

_task = {"__name__": "kforge_task"}
exec(compile(_TASK_SOURCE, f"<kforge task {_TASK_NAME}>", "exec"), _task)
_Model = _task["Model"]

_extension = None
_extension_lock = threading.Lock()

# nvcc flags beyond PyTorch's own. kforge builds a native candidate with plain
# nvcc, so take back the half/bfloat16 switches PyTorch's extension builds add.
_CUDA_CFLAGS = ["-O3", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
                "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__"]


def _arch_flags(device):
    """The arch kforge builds a native candidate for on this GPU (sm_90a on
    Hopper, which wgmma and TMA need); TORCH_CUDA_ARCH_LIST, when set, decides
    instead."""
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return []
    major, minor = torch.cuda.get_device_capability(device)
    arch = f"{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")
    return [f"-gencode=arch=compute_{arch},code=sm_{arch}"]


def _load_extension(device):
    global _extension
    with _extension_lock:
        if _extension is None:
            if device.type != "cuda":
                raise RuntimeError(f"ModelNew runs the native candidate on a CUDA device; the "
                                   f"inputs are on {device}")
            ext = cpp_extension.load_inline(
                name=_EXTENSION_NAME,
                cpp_sources=[_BINDING_SOURCE],
                cuda_sources=[_CUDA_SOURCE],
                extra_cflags=["-O3"],
                extra_cuda_cflags=_CUDA_CFLAGS + _arch_flags(device),
                with_cuda=True,
                verbose=os.environ.get("KFORGE_EXPORT_VERBOSE") == "1")
            version = ext.abi_version()
            if version != _ABI_VERSION:
                raise RuntimeError(
                    f"{_SOURCE_NAME} was written for native ABI {version} (-1: it exports no "
                    f"kforge_abi_version); this wrapper speaks {_ABI_VERSION}")
            _extension = ext
        return _extension


def _split(args):
    """get_inputs()'s values: the tensors, and the rest as doubles."""
    tensors, scalars = [], []
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            tensors.append(a)
        elif isinstance(a, (bool, int, float)):
            scalars.append(float(a))
        else:
            raise TypeError(f"input {i} is a {type(a).__name__}: the native ABI takes tensors "
                            "and int, float or bool values only")
    return tensors, scalars


class _Plan:
    """What one input signature needs: the extension, the outputs' shapes and
    dtypes, how to return them, the device and the workspace."""

    __slots__ = ("ext", "specs", "kind", "device", "workspace")


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.model = _Model(*args, **kwargs)
        self._plans = {}

    def _params(self):
        # The ABI's order: named_parameters() then named_buffers().
        return ([p for _, p in self.model.named_parameters()]
                + [b for _, b in self.model.named_buffers()])

    def _output_specs(self, args):
        meta_args = [torch.empty_like(a, device="meta") if isinstance(a, torch.Tensor) else a
                     for a in args]
        meta_model = copy.deepcopy(self.model).to("meta")
        with torch.no_grad():
            out = meta_model(*meta_args)
        if isinstance(out, torch.Tensor):
            return [(tuple(out.shape), out.dtype)], None
        if isinstance(out, (tuple, list)) and all(isinstance(o, torch.Tensor) for o in out):
            return ([(tuple(o.shape), o.dtype) for o in out],
                    list if isinstance(out, list) else tuple)
        raise TypeError(f"the reference returns a {type(out).__name__}; the native ABI writes "
                        "a tensor or a tuple of tensors")

    def _plan(self, args, tensors, scalars, params):
        plan = _Plan()
        if tensors:
            plan.device = tensors[0].device
        elif params:
            plan.device = params[0].device
        else:
            plan.device = torch.device("cuda", torch.cuda.current_device())
        plan.ext = _load_extension(plan.device)
        plan.specs, plan.kind = self._output_specs(args)
        nbytes = 0
        if plan.ext.has_workspace_bytes():
            # Called once per input signature, before the first forward, with
            # outputs allocated (the candidate must not read them).
            probe = [torch.empty(s, dtype=d, device=plan.device) for s, d in plan.specs]
            nbytes = int(plan.ext.workspace_bytes(tensors, scalars, params, probe))
        plan.workspace = torch.empty(nbytes, dtype=torch.uint8, device=plan.device)
        return plan

    def forward(self, *args):
        tensors, scalars = _split(args)
        params = self._params()
        key = (tuple((tuple(a.shape), tuple(a.stride()), a.dtype, a.device)
                     if isinstance(a, torch.Tensor) else (type(a), a) for a in args),
               tuple((p.dtype, p.device) for p in params))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._plan(args, tensors, scalars, params)
        outs = [torch.empty(shape, dtype=dtype, device=plan.device)
                for shape, dtype in plan.specs]
        plan.ext.forward(tensors, scalars, params, outs, plan.workspace)
        if plan.kind is None:
            return outs[0]
        return plan.kind(outs)
)py";

}  // namespace

std::string InlineNativeAbi(std::string_view source, std::string_view abi_header,
                            std::string_view source_name) {
  const std::string name = LineDirectiveName(source_name);
  std::string header(abi_header);
  if (!header.empty() && header.back() != '\n') header += '\n';
  const std::string inlined = "#line 1 \"kforge_native.h\"\n" + header;

  std::string out = fmt::format("#line 1 \"{}\"\n", name);
  bool replaced = false;
  size_t line_no = 0;
  for (size_t pos = 0; pos < source.size();) {
    size_t end = source.find('\n', pos);
    const size_t next = end == std::string_view::npos ? source.size() : end + 1;
    if (end == std::string_view::npos) end = source.size();
    ++line_no;
    std::string_view line = source.substr(pos, end - pos);
    if (IncludesAbiHeader(line)) {
      out += inlined;
      out += fmt::format("#line {} \"{}\"\n", line_no + 1, name);
      replaced = true;
    } else {
      out.append(source.substr(pos, next - pos));
    }
    pos = next;
  }
  if (!replaced) return inlined + fmt::format("#line 1 \"{}\"\n", name) + std::string(source);
  return out;
}

std::string NativeBindingSource(std::string_view abi_header) {
  std::string header(abi_header);
  if (!header.empty() && header.back() != '\n') header += '\n';
  return Substitute(kBindingTemplate, {{"ABI_HEADER", header}});
}

std::string NativeExtensionName(std::string_view cuda_source, std::string_view binding_source) {
  std::string all;
  all.reserve(cuda_source.size() + binding_source.size() + 1);
  all.append(cuda_source);
  all += '\0';
  all.append(binding_source);
  return "kforge_native_" + Sha256Hex(all).substr(0, 16);
}

std::string PythonStringLiteral(std::string_view text) {
  const bool plain = IsValidUtf8(text) && text.find('\r') == std::string_view::npos &&
                     text.find('\0') == std::string_view::npos && !EndsWith(text, '\\');
  if (plain) {
    // A raw string is exact unless it holds its own delimiter or ends in the
    // quote (which would run into the closing one) or a backslash.
    for (char q : {'\'', '"'}) {
      const std::string delim(3, q);
      if (text.find(delim) == std::string_view::npos && !EndsWith(text, q)) {
        return "r" + delim + std::string(text) + delim;
      }
    }
  }
  std::string out = "'''";
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {  // not UTF-8: the byte's Latin-1 code point
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(text.substr(i, n));
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\'') {
      out += "\\'";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\0') {
      out += "\\x00";
    } else {
      out += c;
    }
    i += n;
  }
  return out + "'''";
}

std::string NativeModelNewPy(const NativeExportInput& in) {
  const std::string cuda = InlineNativeAbi(in.candidate_source, in.abi_header, in.source_name);
  const std::string binding = NativeBindingSource(in.abi_header);
  std::string header = in.header_comment;
  if (!header.empty() && header.back() != '\n') header += '\n';
  return Substitute(kModelNewTemplate,
                    {{"HEADER_COMMENT", header},
                     {"TASK_NAME", PythonStringLiteral(in.task_name)},
                     {"SOURCE_NAME", PythonStringLiteral(in.source_name)},
                     {"EXTENSION_NAME", PythonStringLiteral(NativeExtensionName(cuda, binding))},
                     {"TASK_SOURCE", PythonStringLiteral(in.task_source)},
                     {"CUDA_SOURCE", PythonStringLiteral(cuda)},
                     {"BINDING_SOURCE", PythonStringLiteral(binding)}});
}

}  // namespace kforge::run
