// model_new.py for native candidates: the generated text (ABI inlined, valid
// Python whose embedded sources are exact), the wrapper's Python logic on the
// CPU with a stand-in extension, the real load_inline build of the binding
// and the candidate (when nvcc and PyTorch's headers are here), and
// ExportBest on a native candidate.
#include "run/native_export.h"

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/files.h"
#include "common/python_env.h"
#include "common/subprocess.h"
#include "compile/native_compiler.h"
#include "run/run_report.h"

namespace kforge::run {
namespace {

namespace fs = std::filesystem;

// y = x * scale + bias[col], one output; asks for a workspace it does not use.
constexpr const char* kCandidate = R"cu(// fixture: y = x * scale + bias (row-broadcast)
#include "kforge_native.h"  // the ABI

#include <cuda_runtime.h>

KFORGE_NATIVE_ABI()

__global__ void scale_bias(const float* x, const float* bias, float* y, float scale, int64_t n,
                           int64_t cols) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * scale + bias[i % cols];
}

KFORGE_EXPORT size_t kforge_workspace_bytes(const kf_call* call) {
  return call->num_inputs == 1 ? 256 : 0;
}

KFORGE_EXPORT int32_t kforge_forward(const kf_call* call) {
  if (call->num_inputs != 1 || call->num_scalars != 1 || call->num_params != 1) return 1;
  const kf_tensor& x = call->inputs[0];
  if (x.dtype != KF_FLOAT32 || x.ndim != 2 || x.strides[1] != 1) return 3;
  int64_t n = x.shape[0] * x.shape[1];
  int threads = 256;
  scale_bias<<<(unsigned)((n + threads - 1) / threads), threads, 0, (cudaStream_t)call->stream>>>(
      (const float*)x.data, (const float*)call->params[0].data, (float*)call->outputs[0].data,
      (float)call->scalars[0], n, x.shape[1]);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
)cu";

// A task with a parameter, a buffer, a scalar input and two outputs.
constexpr const char* kTask = R"py(import torch
import torch.nn as nn


class Model(nn.Module):
    """y = (x @ W^T + b) * scale + shift; returns (y, y.sum(1))."""

    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.register_buffer("shift", torch.full((n,), 0.5))

    def forward(self, x, scale):
        y = self.lin(x) * scale + self.shift
        return y, y.sum(dim=1)


batch_size = 4
features = 8


def get_inputs():
    return [torch.randn(batch_size, features), 2.0]


def get_init_inputs():
    return [features]
)py";

// Checks module-level literals of a Python file against files: argv[1] the
// .py, then NAME=FILE pairs, or class:NAME for a class the module defines.
// Bytes that are not UTF-8 compare as their Latin-1 code points.
constexpr const char* kCheckLiterals = R"py(import ast
import sys


def decode(b):
    s = b.decode("utf-8", errors="surrogateescape")
    return "".join(chr(ord(c) - 0xDC00) if 0xDC80 <= ord(c) <= 0xDCFF else c for c in s)


path = sys.argv[1]
tree = ast.parse(open(path, "rb").read(), path)
values, classes = {}, set()
for node in tree.body:
    if isinstance(node, ast.ClassDef):
        classes.add(node.name)
    if isinstance(node, ast.Assign) and len(node.targets) == 1 \
            and isinstance(node.targets[0], ast.Name):
        try:
            values[node.targets[0].id] = ast.literal_eval(node.value)
        except ValueError:
            pass
bad = 0
for arg in sys.argv[2:]:
    if arg.startswith("class:"):
        if arg[6:] not in classes:
            print("no class", arg[6:])
            bad += 1
        continue
    name, file = arg.split("=", 1)
    want = decode(open(file, "rb").read())
    got = values.get(name)
    if got != want:
        print(f"{name} differs: {got!r} != {want!r}")
        bad += 1
print("ok" if not bad else "failed")
sys.exit(1 if bad else 0)
)py";

// The wrapper's Python side on the CPU, the extension replaced by one that
// computes the task's function from the parameters it is handed.
constexpr const char* kFakeForward = R"py(import importlib.util
import sys

import torch

spec = importlib.util.spec_from_file_location("model_new", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)


class FakeExtension:
    def __init__(self):
        self.workspace_queries = 0
        self.calls = []

    def has_workspace_bytes(self):
        return True

    def workspace_bytes(self, tensors, scalars, params, outputs):
        self.workspace_queries += 1
        assert [tuple(o.shape) for o in outputs] == [tuple(tensors[0].shape), (tensors[0].shape[0],)]
        return 64

    def forward(self, tensors, scalars, params, outputs, workspace):
        self.calls.append((len(tensors), list(scalars), [tuple(p.shape) for p in params],
                           workspace.numel()))
        (x,), (scale,), (w, b, shift) = tensors, scalars, params
        y = (x @ w.T + b) * scale + shift
        outputs[0].copy_(y)
        outputs[1].copy_(y.sum(dim=1))


fake = FakeExtension()
m._extension = fake
assert not hasattr(m, "get_inputs") and not hasattr(m, "batch_size"), "task globals leaked"
torch.manual_seed(0)
ref = m._Model(8)
torch.manual_seed(0)
new = m.ModelNew(8)
assert sorted(new.state_dict()) == ["model.lin.bias", "model.lin.weight", "model.shift"], \
    list(new.state_dict())
x = torch.randn(4, 8)
got, want = new(x, 2), ref(x, 2)
assert isinstance(got, tuple) and len(got) == 2, type(got)
for g, w in zip(got, want):
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape)
    torch.testing.assert_close(g, w)
assert fake.calls[0] == (1, [2.0], [(8, 8), (8,), (8,)], 64), fake.calls[0]
new(torch.randn(4, 8), 2)
assert fake.workspace_queries == 1, fake.workspace_queries
new(torch.randn(6, 8), 2)
assert fake.workspace_queries == 2, fake.workspace_queries
try:
    new(x, "2")
    raise AssertionError("a str input was accepted")
except TypeError:
    pass
print("ok")
)py";

// The real load_inline build of the generated sources (the arch named,
// there being no GPU to ask), then what the extension answers without one.
constexpr const char* kBuild = R"py(import importlib.util
import sys

import torch

spec = importlib.util.spec_from_file_location("model_new", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
m._arch_flags = lambda device: ["-gencode=arch=compute_90a,code=sm_90a"]
ext = m._load_extension(torch.device("cuda"))
assert ext.abi_version() == 1, ext.abi_version()
assert ext.has_workspace_bytes()
try:
    ext.forward([torch.ones(2, 2)], [1.0], [torch.ones(2)], [torch.empty(2, 2)], torch.empty(0))
    raise AssertionError("CPU tensors were accepted")
except RuntimeError as e:
    assert "CUDA device" in str(e), str(e)
print("ok")
)py";

struct Ran {
  bool ok = false;
  std::string output;  // stdout, then stderr
};

class NativeExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = MakeTempDir(fs::temp_directory_path(), "kforge-native-export-test-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    EXPECT_TRUE(WriteFileAtomic(p, text).ok());
    return p;
  }

  Ran RunArgv(std::vector<std::string> argv, std::chrono::seconds timeout,
              std::map<std::string, std::string> env = {}) {
    SpawnSpec spec;
    spec.argv = std::move(argv);
    spec.working_dir = dir_;
    spec.env_set = std::move(env);
    spec.stderr_path = dir_ / "stderr.txt";
    auto r = RunCommand(spec, timeout);
    Ran out;
    if (!r.ok()) {
      out.output = r.error().message;
      return out;
    }
    auto err = ReadFile(spec.stderr_path);
    out.ok = r->exit.exited && r->exit.exit_code == 0;
    out.output = r->stdout_text + (err.ok() ? *err : "") + r->exit.Describe();
    return out;
  }

  Ran Python(const std::string& script, std::vector<std::string> args,
             std::chrono::seconds timeout = std::chrono::seconds(120),
             std::map<std::string, std::string> env = {}) {
    std::vector<std::string> argv{PythonExecutable(), Write("script.py", script).string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunArgv(std::move(argv), timeout, std::move(env));
  }

  bool HasPython(const std::string& module) {
    return RunArgv({PythonExecutable(), "-c", "import " + module}, std::chrono::seconds(60)).ok;
  }

  NativeExportInput Input() {
    NativeExportInput in;
    in.candidate_source = kCandidate;
    in.abi_header = std::string(compile::NativeAbiHeader());
    in.task_source = kTask;
    in.task_name = "scale_bias";
    in.source_name = "scale_bias_c1.cu";
    in.header_comment = "# model_new.py: generated by a test.\n\n";
    return in;
  }

  fs::path dir_;
};

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(NativeExportTest, InliningReplacesTheIncludeAndKeepsTheCandidatesLineNumbers) {
  const std::string header = "#ifndef H\n#define H\nint abi;\n#endif\n";
  std::string src = "// one\n  #  include \"kforge_native.h\" // the ABI\nint three;\n";
  std::string cu = InlineNativeAbi(src, header, "x.cu");
  EXPECT_EQ(cu, "#line 1 \"x.cu\"\n// one\n#line 1 \"kforge_native.h\"\n" + header +
                    "#line 3 \"x.cu\"\nint three;\n");
  // Angle brackets too; a header of another name, or in a comment, stays.
  cu = InlineNativeAbi(
      "#include <kforge_native.h>\n#include \"kforge_native.hpp\"\n"
      "// #include \"kforge_native.h\"\n",
      header, "x.cu");
  EXPECT_EQ(Count(cu, "int abi;"), 1u);
  EXPECT_EQ(cu.find("<kforge_native.h>"), std::string::npos);
  EXPECT_NE(cu.find("#include \"kforge_native.hpp\""), std::string::npos);
  EXPECT_NE(cu.find("// #include \"kforge_native.h\""), std::string::npos);
  // No include: the header goes first, the candidate keeps its numbering.
  cu = InlineNativeAbi("int one;", header, "x.cu");
  EXPECT_EQ(cu, "#line 1 \"kforge_native.h\"\n" + header + "#line 1 \"x.cu\"\nint one;");
  // A name that would break the directive is cleaned.
  cu = InlineNativeAbi("int one;\n", header, "a\"b\\c.cu");
  EXPECT_NE(cu.find("#line 1 \"abc.cu\""), std::string::npos);
}

TEST_F(NativeExportTest, PythonStringLiteralsAreExactAndRawWhenTheyCanBe) {
  EXPECT_EQ(PythonStringLiteral("a \"b\" 'c' \\n"), "r'''a \"b\" 'c' \\n'''");
  EXPECT_EQ(PythonStringLiteral("x = '''doc'''"), "r\"\"\"x = '''doc'''\"\"\"");
  if (!HasPython("ast")) GTEST_SKIP() << "no " << PythonExecutable();
  const std::vector<std::string> texts = {
      "",
      "plain\nlines\n",
      "ends in a quote'",
      "ends in a double quote\"",
      "ends in a backslash\\",
      "both ''' and \"\"\" inside",
      "''' and ends in '",
      "escapes \\n \\' \\\" \\\\ stay as written\\\n",
      "carriage\r\nreturn",
      std::string("nul \0 byte", 10),
      "utf-8: \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
      "not utf-8: \xff\xfe \xc3 end",
      "'''\\",
  };
  std::string py;
  std::vector<std::string> args;
  for (size_t i = 0; i < texts.size(); ++i) {
    py += "V" + std::to_string(i) + " = " + PythonStringLiteral(texts[i]) + "\n";
    args.push_back("V" + std::to_string(i) + "=" +
                   Write("text" + std::to_string(i), texts[i]).string());
  }
  args.insert(args.begin(), Write("literals.py", py).string());
  Ran r = Python(kCheckLiterals, args);
  EXPECT_TRUE(r.ok) << r.output << "\n" << py;
}

TEST_F(NativeExportTest, ModelNewEmbedsTheAbiTheCandidateAndTheTaskExactly) {
  NativeExportInput in = Input();
  const std::string py = NativeModelNewPy(in);
  const std::string header(compile::NativeAbiHeader());
  ASSERT_FALSE(header.empty());
  // The ABI is inlined (in the CUDA source and the binding), not included.
  EXPECT_EQ(Count(py, header), 2u);
  EXPECT_EQ(py.find("#include \"kforge_native.h\""), std::string::npos);
  EXPECT_EQ(py.find("<kforge_native.h>"), std::string::npos);
  // The candidate, after its include line, verbatim; the task verbatim.
  const std::string candidate(kCandidate);
  EXPECT_NE(py.find(candidate.substr(candidate.find("#include <cuda_runtime.h>"))),
            std::string::npos);
  EXPECT_NE(py.find(kTask), std::string::npos);
  EXPECT_EQ(py.rfind(in.header_comment, 0), 0u);
  EXPECT_NE(py.find("class ModelNew(torch.nn.Module):"), std::string::npos);
  EXPECT_NE(py.find("load_inline("), std::string::npos);
  EXPECT_NE(py.find("__attribute__((weak)) size_t kforge_workspace_bytes"), std::string::npos);
  EXPECT_NE(py.find("at::cuda::getCurrentCUDAStream"), std::string::npos);
  const std::string cuda = InlineNativeAbi(in.candidate_source, header, in.source_name);
  const std::string binding = NativeBindingSource(header);
  const std::string name = NativeExtensionName(cuda, binding);
  EXPECT_NE(py.find("_EXTENSION_NAME = r'''" + name + "'''"), std::string::npos);

  if (!HasPython("ast")) GTEST_SKIP() << "no " << PythonExecutable();
  Ran r = Python(kCheckLiterals, {Write("model_new.py", py).string(), "class:ModelNew",
                                  "_TASK_SOURCE=" + Write("task.py", kTask).string(),
                                  "_CUDA_SOURCE=" + Write("cuda.cu", cuda).string(),
                                  "_BINDING_SOURCE=" + Write("binding.cpp", binding).string(),
                                  "_SOURCE_NAME=" + Write("name", in.source_name).string()});
  EXPECT_TRUE(r.ok) << r.output;
}

TEST_F(NativeExportTest, TheExtensionNameFollowsTheSource) {
  NativeExportInput in = Input();
  const std::string header(compile::NativeAbiHeader());
  auto name_of = [&](const std::string& source) {
    return NativeExtensionName(InlineNativeAbi(source, header, in.source_name),
                               NativeBindingSource(header));
  };
  const std::string a = name_of(kCandidate);
  EXPECT_EQ(a, name_of(kCandidate));
  EXPECT_NE(a, name_of(std::string(kCandidate) + "// another candidate\n"));
  EXPECT_EQ(a.rfind("kforge_native_", 0), 0u);
  EXPECT_EQ(a.size(), std::string("kforge_native_").size() + 16);
  for (char c : a) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_') << a;
  EXPECT_NE(NativeModelNewPy(in).find(a), std::string::npos);
}

TEST_F(NativeExportTest, TheWrapperSplitsInputsAndReturnsTheReferencesStructureOnTheCpu) {
  if (!HasPython("torch")) GTEST_SKIP() << "no PyTorch for " << PythonExecutable();
  Ran r = Python(kFakeForward, {Write("model_new.py", NativeModelNewPy(Input())).string()});
  EXPECT_TRUE(r.ok) << r.output;
}

// Slow (about a minute on two cores): PyTorch's headers, twice.
TEST_F(NativeExportTest, LoadInlineBuildsTheBindingAndTheCandidate) {
  std::string nvcc = "/usr/local/cuda/bin/nvcc";
  if (const char* e = std::getenv("KFORGE_NVCC")) nvcc = e;
  if (!fs::exists(nvcc)) GTEST_SKIP() << "no " << nvcc;
  Ran probe = RunArgv({PythonExecutable(), "-c",
                       "import os, torch; from torch.utils import cpp_extension as c; "
                       "assert torch.version.cuda and c.CUDA_HOME; c.verify_ninja_availability(); "
                       "assert all(os.path.exists(os.path.join(p, 'ATen', 'cuda', "
                       "'CUDAContext.h')) for p in c.include_paths()[:1])"},
                      std::chrono::seconds(60));
  if (!probe.ok) GTEST_SKIP() << "no PyTorch with CUDA headers: " << probe.output;
  const fs::path cuda_home = fs::path(nvcc).parent_path().parent_path();
  std::string path = (cuda_home / "bin").string();
  if (const char* p = std::getenv("PATH")) path += std::string(":") + p;
  Ran r = Python(kBuild, {Write("model_new.py", NativeModelNewPy(Input())).string()},
                 std::chrono::seconds(900),
                 {{"TORCH_EXTENSIONS_DIR", (dir_ / "torch_extensions").string()},
                  {"CUDA_HOME", cuda_home.string()},
                  {"PATH", path}});
  EXPECT_TRUE(r.ok) << r.output;
}

TEST_F(NativeExportTest, ExportBestWritesTheCuAndAWrapperForANativeCandidate) {
  auto store = OpenStore((dir_ / "k.db").string());
  ASSERT_TRUE(store.ok()) << store.error().message;
  TaskRecord task{"taskhash", "scale_bias", (dir_ / "gone.py").string(), kTask, ""};
  ASSERT_TRUE((*store)->PutTask(task).ok());
  RunRecord run;
  run.task_name = "scale_bias";
  run.task_path = task.path;  // missing: the recorded source is used
  run.task_hash = task.task_hash;
  run.strategy = "greedy";
  run.llm_spec = "scripted";
  run.device = "NVIDIA H100";
  run.iterations_target = 1;
  auto run_id = (*store)->CreateRun(run);
  ASSERT_TRUE(run_id.ok());
  CandidateRecord c;
  c.run_id = *run_id;
  c.source = kCandidate;
  c.sha256 = "sha";
  c.format = "native";
  auto added = (*store)->AddCandidate(c);
  ASSERT_TRUE(added.ok()) << added.error().message;
  EvaluationRecord e;
  e.candidate_id = added->id;
  e.eval_json = "{}";
  e.accepted = true;
  e.speedup_eager = 1.7;
  e.verdict = "ok";
  ASSERT_TRUE((*store)->RecordEvaluation(e).ok());

  auto exported = ExportBest(**store, *run_id, dir_ / "out");
  ASSERT_TRUE(exported.ok()) << exported.error().message;
  EXPECT_EQ(exported->source_path.filename(), "scale_bias_" + added->id + ".cu");
  EXPECT_EQ(*ReadFile(exported->source_path), kCandidate);
  auto py = ReadFile(exported->model_new_path);
  ASSERT_TRUE(py.ok());
  EXPECT_NE(py->find("1.70x faster than eager PyTorch"), std::string::npos);
  EXPECT_NE(py->find(*run_id), std::string::npos);
  EXPECT_NE(py->find("Generated from a native candidate (scale_bias_" + added->id + ".cu"),
            std::string::npos);
  EXPECT_NE(py->find(kTask), std::string::npos);
  EXPECT_NE(py->find("#line 3 \"scale_bias_" + added->id + ".cu\""), std::string::npos);
  EXPECT_EQ(py->find("#include \"kforge_native.h\""), std::string::npos);
  NativeExportInput in = Input();
  in.source_name = exported->source_path.filename().string();
  const std::string cuda = InlineNativeAbi(in.candidate_source, in.abi_header, in.source_name);
  EXPECT_NE(py->find(NativeExtensionName(cuda, NativeBindingSource(in.abi_header))),
            std::string::npos);

  // Without the recorded source or the file, a native export cannot be made.
  RunRecord orphan = run;
  orphan.id.clear();
  orphan.task_hash = "unknown";
  auto orphan_id = (*store)->CreateRun(orphan);
  ASSERT_TRUE(orphan_id.ok());
  c.run_id = *orphan_id;
  auto added2 = (*store)->AddCandidate(c);
  ASSERT_TRUE(added2.ok());
  e.candidate_id = added2->id;
  ASSERT_TRUE((*store)->RecordEvaluation(e).ok());
  auto failed = ExportBest(**store, *orphan_id, dir_ / "out2");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, ErrorKind::kNotFound);
}

}  // namespace
}  // namespace kforge::run
