#include "candidate/candidate.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/files.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHalfCandidate = R"(import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.half()
)";

fs::path Write(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::path p = dir / name;
  EXPECT_TRUE(WriteFileAtomic(p, text).ok());
  return p;
}

bool HasCheck(const StaticReport& r, const std::string& id) {
  return std::any_of(r.findings.begin(), r.findings.end(),
                     [&](const StaticFinding& f) { return f.check == id; });
}

TEST(StaticChecksTest, PrecisionDowncastIsJudgedAgainstTheTask) {
  auto dir = MakeTempDir(fs::temp_directory_path(), "kforge-candidate-test-");
  ASSERT_TRUE(dir.ok());
  fs::path cand_path = Write(*dir, "cand.py", kHalfCandidate);
  fs::path fp32_task =
      Write(*dir, "fp32_task.py", "import torch\ndef get_inputs():\n    return [torch.randn(4)]\n");
  fs::path fp16_task =
      Write(*dir, "fp16_task.py",
            "import torch\ndef get_inputs():\n    return [torch.randn(4, dtype=torch.float16)]\n");
  auto cand = LoadCandidateFile(cand_path, "cuda");
  ASSERT_TRUE(cand.ok());

  auto alone = RunStaticChecks(*cand, {});
  ASSERT_TRUE(alone.ok()) << alone.error().message;
  EXPECT_TRUE(HasCheck(*alone, "precision_downcast"));

  auto on_fp32 = RunStaticChecks(*cand, {}, fp32_task);
  ASSERT_TRUE(on_fp32.ok()) << on_fp32.error().message;
  EXPECT_TRUE(HasCheck(*on_fp32, "precision_downcast"));

  // The task works in fp16 itself: the cast is expected, not a downcast.
  auto on_fp16 = RunStaticChecks(*cand, {}, fp16_task);
  ASSERT_TRUE(on_fp16.ok()) << on_fp16.error().message;
  EXPECT_FALSE(HasCheck(*on_fp16, "precision_downcast"));
  // Other checks are unaffected by the task.
  EXPECT_EQ(HasCheck(*on_fp16, "torch_compute"), HasCheck(*alone, "torch_compute"));
  fs::remove_all(*dir);
}

}  // namespace
}  // namespace kforge
