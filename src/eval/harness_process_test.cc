#include "eval/harness_process.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

TEST(LastLine, IsTheLastNonEmptyLine) {
  EXPECT_EQ(LastLine("Traceback:\n  frame\nValueError: bad\n\n  \n", 100), "ValueError: bad");
  EXPECT_EQ(LastLine("only line", 100), "only line");
  EXPECT_EQ(LastLine("\n\n", 100), "");
  EXPECT_EQ(LastLine("", 100), "");
}

// A long exception line keeps its start: the exception's type and the words
// `kforge baseline` reads to skip a task that does not fit in memory.
TEST(LastLine, ALongLineKeepsItsStart) {
  std::string oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB. " +
                    std::string(700, 'x');
  std::string line = LastLine("Traceback (most recent call last):\n" + oom + "\n", 120);
  EXPECT_EQ(line.rfind("torch.OutOfMemoryError: CUDA out of memory.", 0), 0u) << line;
  EXPECT_EQ(line.size(), 120u + 4);  // the kept start and " ..."
}

}  // namespace
}  // namespace kforge
