// CUDA Agent's pattern filter for rejection fine-tuning (Section 3.3): drop
// trajectories that loop or break the tool-call schema. kforge's samples are
// single replies, so the tests are on the reply text (docs/rl.md gives the
// exact rules and thresholds).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "rl/training_sample.h"

namespace kforge::rl {

// Why the text loops, or nullopt. Two tests:
//  - lines: a block of 1..50 consecutive lines (trailing whitespace ignored)
//    with at least 16 non-whitespace characters, repeated at least 4 times
//    back to back;
//  - characters: a unit of 8..100 characters with at least 3 distinct
//    non-whitespace characters, repeated at least 8 times back to back.
std::optional<std::string> FindRepetitionLoop(std::string_view text);

// Why the reply is degenerate, or nullopt: it loops (FindRepetitionLoop),
// was cut at the token limit (finish_reason "length"), has no closed fenced
// code block, or makes a tool call that names a tool the request did not
// offer or whose arguments are not a JSON object; or, for a candidate an
// agent episode submitted, the episode made an invalid tool call or repeated
// an identical call with no file written in between (CUDA Agent's filter on
// whole trajectories).
std::optional<std::string> DegenerateReason(const TrainingSample& sample);

}  // namespace kforge::rl
