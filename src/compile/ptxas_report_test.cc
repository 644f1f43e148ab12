#include "compile/ptxas_report.h"

#include <gtest/gtest.h>

namespace kforge::compile {
namespace {

// Recorded from nvcc 13.0 (-Xptxas -v, sm_90a) on testdata/smem_spill.cu, plus an
// older-format line with cmem and spills, and a device function's properties.
constexpr const char* kLog = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z8tile_sumPKfPfl' for 'sm_90a'
ptxas info    : Function properties for _Z8tile_sumPKfPfl
    256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem
ptxas info    : Compile time = 101.779 ms
ptxas info    : Function properties for _Z6helperf
    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z4heavyPf' for 'sm_90a'
ptxas info    : Function properties for _Z4heavyPf
    96 bytes stack frame, 40 bytes spill stores, 24 bytes spill loads
ptxas info    : Used 255 registers, 368 bytes cmem[0]
)";

TEST(PtxasReportTest, ParsesEveryEntryFunction) {
  auto kernels = ParsePtxasLog(kLog);
  ASSERT_EQ(kernels.size(), 2u);
  const KernelResources& a = kernels[0];
  EXPECT_EQ(a.name, "_Z8tile_sumPKfPfl");
  EXPECT_EQ(a.arch, "sm_90a");
  EXPECT_EQ(a.registers, 32);
  EXPECT_EQ(a.barriers, 1);
  EXPECT_EQ(a.shared_bytes, 1024);
  EXPECT_EQ(a.stack_frame_bytes, 256);
  EXPECT_EQ(a.spill_store_bytes, 0);
  const KernelResources& b = kernels[1];
  EXPECT_EQ(b.name, "_Z4heavyPf");
  EXPECT_EQ(b.registers, 255);
  EXPECT_EQ(b.constant_bytes, 368);
  EXPECT_EQ(b.stack_frame_bytes, 96);  // not the device function's 8
  EXPECT_EQ(b.spill_store_bytes, 40);
  EXPECT_EQ(b.spill_load_bytes, 24);
  EXPECT_EQ(b.ToJson()["spill_load_bytes"], 24);
}

TEST(PtxasReportTest, NoPtxasLinesGiveNothing) {
  EXPECT_TRUE(ParsePtxasLog("").empty());
  EXPECT_TRUE(ParsePtxasLog("k.cu(3): error: identifier \"x\" is undefined\n").empty());
}

}  // namespace
}  // namespace kforge::compile
