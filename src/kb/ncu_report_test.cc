#include "kb/ncu_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace kforge::kb {
namespace {

namespace fs = std::filesystem;

// Recorded on an H100 (ncu 2025.3.1, `--clock-control none`), see
// bench/results/issue9/README.md.
const fs::path kRecorded = fs::path(KFORGE_SOURCE_DIR) / "bench/results/issue9/ncu";

std::string ReadRecorded(const std::string& name) {
  std::ifstream in(kRecorded / (name + ".raw.csv"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<KernelProfile> ParseRecorded(const std::string& name) {
  auto r = ParseNcuRawCsv(ReadRecorded(name));
  if (!r.ok()) ADD_FAILURE() << name << ": " << r.error().message;
  return r.ok() ? r.value() : std::vector<KernelProfile>{};
}

TEST(ParseNcuRawCsv, FoldsLaunchesOfOneKernel) {
  // torch.relu over 1.6e9 elements: four launches of one kernel (32-bit index splits).
  auto k = ParseRecorded("l1_19_ReLU");
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].name, "vectorized_elementwise_kernel");
  EXPECT_EQ(k[0].launches, 4);
  EXPECT_NEAR(k[0].duration_us, (1060.480 + 1062.912 + 1062.144 + 1064.288) / 4, 1e-3);
  EXPECT_NEAR(k[0].memory_sol_pct, 89.87, 0.05);
  EXPECT_NEAR(k[0].compute_sol_pct, 14.65, 0.05);
  EXPECT_NEAR(k[0].dram_throughput_pct, 89.87, 0.05);
  EXPECT_NEAR(k[0].l2_throughput_pct, 80.49, 0.05);
  EXPECT_NEAR(k[0].achieved_occupancy_pct, 84.76, 0.05);
  EXPECT_EQ(k[0].registers_per_thread, 28);
  ASSERT_FALSE(k[0].top_stalls.empty());
  EXPECT_EQ(k[0].top_stalls[0].first, "long_scoreboard");
  EXPECT_GT(k[0].top_stalls[0].second, 60);
  EXPECT_LE(k[0].top_stalls.size(), 5u);
  double shares = 0;
  for (const auto& [reason, pct] : k[0].top_stalls) {
    EXPECT_NE(reason, "selected");
    shares += pct;
  }
  EXPECT_LE(shares, 100.0 + 1e-9);
}

TEST(ParseNcuRawCsv, ReadsMicrosecondDurationsAndKeepsKernelsApart) {
  // CrossEntropyLoss: a softmax kernel and an NLL reduction, durations in us.
  auto k = ParseRecorded("l1_95_CrossEntropyLoss");
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name, "cunn_SoftMaxForwardReg");
  EXPECT_NEAR(k[0].duration_us, 430.176, 1e-3);
  EXPECT_EQ(k[1].name, "nll_loss_forward_reduce_cuda_kernel_2d");
  EXPECT_NEAR(k[1].duration_us, 37.12, 1e-3);
  EXPECT_NEAR(k[1].memory_sol_pct, 1.91, 0.01);
}

TEST(ParseNcuRawCsv, RejectsWhatIsNotTheRawPage) {
  EXPECT_FALSE(ParseNcuRawCsv("").ok());
  EXPECT_FALSE(ParseNcuRawCsv("hello,world\n1,2\n").ok());
  // The details page has a header but no metric columns.
  std::ifstream in(kRecorded / "l1_19_ReLU.details.csv");
  std::stringstream ss;
  ss << in.rdbuf();
  auto details = ParseNcuRawCsv(ss.str());
  ASSERT_FALSE(details.ok());
  EXPECT_EQ(details.error().kind, ErrorKind::kBadInput);
  // A row cut short.
  std::string raw = ReadRecorded("l1_12_Matmul_with_diagonal_matrices_");
  auto cut = ParseNcuRawCsv(raw.substr(0, raw.size() - 200));
  EXPECT_FALSE(cut.ok());
}

TEST(ParseNcuRawCsv, ToleratesProfilerLinesAndMissingMetrics) {
  std::string csv =
      "==PROF== Connected to process 1\n"
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"launch__registers_per_thread\"\n"
      "\"\",\"\",\"nsecond\",\"register/thread\"\n"
      "\"0\",\"void k<1>(int)\",\"2,500\",\"40\"\n"
      "\"1\",\"void k<1>(int)\",\"3,500\",\"48\"\n";
  auto r = ParseNcuRawCsv(csv);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().size(), 1u);
  const auto& k = r.value()[0];
  EXPECT_EQ(k.launches, 2);
  EXPECT_NEAR(k.duration_us, 3.0, 1e-9);
  EXPECT_EQ(k.registers_per_thread, 48);
  EXPECT_LT(k.memory_sol_pct, 0);  // not in the profile: unknown
  EXPECT_EQ(ClassifyKernel(k).state, kLaunchBound);
}

TEST(ShortKernelName, DropsReturnTypeTemplatesAndParameters) {
  EXPECT_EQ(ShortKernelName("void at::native::vectorized_elementwise_kernel<4, F>(int, F)"),
            "at::native::vectorized_elementwise_kernel");
  EXPECT_EQ(ShortKernelName("void unnamed>::cunn_SoftMaxForward<4, float>(float *)"),
            "cunn_SoftMaxForward");
  EXPECT_EQ(ShortKernelName("(anonymous namespace)::k(int)"), "k");
  EXPECT_EQ(ShortKernelName("relu_kernel(const float *, float *, long)"), "relu_kernel");
  EXPECT_EQ(ShortKernelName("sm80_xmma_gemm_f32f32"), "sm80_xmma_gemm_f32f32");
}

// The states check of issue 9: the rule-based state of each recorded program
// against the manual reading in bench/results/issue9/README.md.
TEST(RecordedProfiles, StatesMatchTheManualReading) {
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"fixture_default_stream", kMemoryBound},
      {"fixture_side_stream", kMemoryBound},
      {"l1_1_Square_matrix_multiplication_", kComputeBound},
      {"l1_12_Matmul_with_diagonal_matrices_", kMemoryBound},
      {"l1_19_ReLU", kMemoryBound},
      {"l1_23_Softmax", kMemoryBound},
      {"l1_40_LayerNorm", kOccupancyLimited},
      {"l1_42_Max_Pooling_2D", kComputeBound},
      {"l1_47_Sum_reduction_over_a_dimension", kMemoryBound},
      {"l1_50_conv_standard_2D__square_input__square_kernel", kMemoryBound},
      {"l1_88_MinGPTNewGelu", kMemoryBound},
      {"l1_95_CrossEntropyLoss", kMemoryBound},
  };
  for (const auto& [name, state] : expected) {
    auto kernels = ParseRecorded(name);
    ASSERT_FALSE(kernels.empty()) << name;
    EXPECT_EQ(ClassifyProgram(kernels).state, state) << name;
  }
  // The second kernel of CrossEntropyLoss, a one-block reduction, is latency-bound.
  auto ce = ParseRecorded("l1_95_CrossEntropyLoss");
  ASSERT_EQ(ce.size(), 2u);
  EXPECT_EQ(ClassifyKernel(ce[1]).state, kLatencyBound);
}

}  // namespace
}  // namespace kforge::kb
