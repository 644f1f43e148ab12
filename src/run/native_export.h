// model_new.py for a native candidate (docs/candidate-formats.md, "Export"):
// the candidate is CUDA against the kforge C ABI, not a PyTorch module, so
// `kforge best` writes a thin PyTorch wrapper around it. The wrapper embeds
// the task (for the reference Model and its weights), the candidate with the
// ABI header inlined, and a small C++ binding that fills a kf_call from
// torch::Tensors; torch.utils.cpp_extension.load_inline builds the two on the
// first forward.
#pragma once

#include <string>
#include <string_view>

namespace kforge::run {

struct NativeExportInput {
  std::string candidate_source;  // the .cu, as stored
  std::string abi_header;        // compile::NativeAbiHeader()
  std::string task_source;       // the task file (defines Model)
  std::string task_name;
  // The .cu's file name beside model_new.py: nvcc's messages name its lines.
  std::string source_name = "candidate.cu";
  // Lines placed at the top of the file (each starting with '#'), e.g. where
  // the candidate came from and what it measured.
  std::string header_comment;
};

// The CUDA translation unit: `source` with each line that includes
// kforge_native.h replaced by `abi_header` (the header first when no line
// does), with #line directives so that nvcc's messages give `source_name`'s
// own line numbers.
std::string InlineNativeAbi(std::string_view source, std::string_view abi_header,
                            std::string_view source_name);

// The C++ binding (load_inline's cpp_sources, after its implicit
// torch/extension.h): forward / workspace_bytes / has_workspace_bytes /
// abi_version over the kforge symbols, the optional ones declared weak.
std::string NativeBindingSource(std::string_view abi_header);

// "kforge_native_" + 16 hex digits of SHA-256 over everything the extension
// compiles: a different candidate is a different extension (and build dir).
std::string NativeExtensionName(std::string_view cuda_source, std::string_view binding_source);

// A Python expression whose value is exactly `text`: a raw triple-quoted
// string when that is exact (readable), else an escaped one. Bytes that are
// not UTF-8 come out as \xNN (their Latin-1 code points).
std::string PythonStringLiteral(std::string_view text);

// The text of model_new.py.
std::string NativeModelNewPy(const NativeExportInput& in);

}  // namespace kforge::run
