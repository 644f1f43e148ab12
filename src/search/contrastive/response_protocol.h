// The answer protocol of a contrastive prompt (CUDA-L1 Section 2.4.2): the
// model first compares the scored exemplars (performance analysis), then
// states its plan as numbered points (algorithm design), then writes the code.
// Prompt templates name the three sections with these headings, and
// ParseContrastiveResponse splits a reply along them.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace kforge::search {

inline constexpr std::string_view kPerformanceAnalysisHeading = "Performance Analysis";
inline constexpr std::string_view kAlgorithmDesignHeading = "Algorithm Design";
inline constexpr std::string_view kCodeImplementationHeading = "Code Implementation";

struct ContrastiveResponse {
  std::string analysis;  // text under "Performance Analysis"
  std::string design;    // text under "Algorithm Design"
  std::string code;      // body of the last fenced block under "Code Implementation"
};

// A heading is a line that, once leading '#', '*' and blanks are dropped,
// starts with the section name (any case), e.g. "## Algorithm Design:".
// The three sections must appear in protocol order; a missing section or a
// code section without a fenced block is kBadInput.
Result<ContrastiveResponse> ParseContrastiveResponse(std::string_view text);

}  // namespace kforge::search
