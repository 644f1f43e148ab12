// `kforge export`: a run's or a bench's samples as JSON Lines records for
// training (docs/rl.md has the formats, the schemas and the reward).
//   sft   accepted candidates' (prompt, response)
//   rft   CUDA Agent's rejection sampling: reward > 0 and not degenerate
//   grpo  samples grouped by prompt context (run, task, parents), with
//         group-normalised advantages
//   dpo   (chosen, rejected) pairs from one group, chosen preferred
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "rl/training_sample.h"

namespace kforge::rl {

enum class ExportFormat { kSft, kRft, kGrpo, kDpo };

// kBadInput naming the formats.
Result<ExportFormat> ParseExportFormat(const std::string& name);
std::string ExportFormatName(ExportFormat format);

struct ExportOptions {
  // Suspect evaluations (a possible hack the integrity checks could not
  // rule out) are left out unless asked for, as in report headlines.
  bool include_suspect = false;
};

// What an export dropped, for the one summary line on stderr.
struct ExportSummary {
  size_t samples = 0;     // samples loaded
  size_t suspect = 0;     // left out as suspect
  size_t degenerate = 0;  // rft: left out by the pattern filter
  size_t records = 0;
};

// The records, one JSON object per output line, in a deterministic order.
std::vector<nlohmann::json> ExportRecords(const std::vector<TrainingSample>& samples,
                                          ExportFormat format, const ExportOptions& options,
                                          ExportSummary* summary = nullptr);

// The JSON schema every record of `format` validates against (the one
// docs/rl.md prints; kforge::llm::ValidateAgainstSchema checks it).
nlohmann::json RecordSchema(ExportFormat format);

// A sample as a record: prompt, response, reward, metadata.
nlohmann::json SampleRecord(const TrainingSample& sample);

// Whether `a` is preferred to `b` for DPO: a higher milestone, or the same
// positive milestone and an eager speedup more than 5% higher.
bool Preferred(const TrainingSample& a, const TrainingSample& b);

}  // namespace kforge::rl
