#include "eval/evaluation_session.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <system_error>

namespace kforge {

namespace fs = std::filesystem;

EvaluationSession::EvaluationSession(fs::path dir, bool reuse)
    : dir_(std::move(dir)), reuse_(reuse) {}

EvaluationSession::~EvaluationSession() {
  Discard();
  std::error_code ec;
  if (std::getenv("KFORGE_KEEP_SCRATCH") == nullptr) fs::remove_all(dir_, ec);
}

HarnessProcess* EvaluationSession::Adopt(const std::string& key) {
  if (reference_ && (!reuse_ || key != key_ || !reference_->alive())) Discard();
  if (!reference_) return nullptr;
  ++uses_;
  return &*reference_;
}

HarnessProcess* EvaluationSession::Install(HarnessProcess process, const std::string& key) {
  Discard();
  reference_.emplace(std::move(process));
  key_ = key;
  load_reply_ = nlohmann::json::object();
  uses_ = 1;
  return &*reference_;
}

void EvaluationSession::OfferSpeedup(const RatioEstimate& speedup) {
  if (!reference_ || !(speedup.value > 0)) return;
  if (!best_speedup_ || speedup.value > best_speedup_->value) best_speedup_ = speedup;
}

void EvaluationSession::Discard() {
  if (reference_) reference_->Stop();
  reference_.reset();
  key_.clear();
  uses_ = 0;
  best_speedup_.reset();
  std::error_code ec;
  for (const auto& [path, stamp] : files_) fs::remove(path, ec);
  files_.clear();
  StopSpare();
}

void EvaluationSession::StopSpare() {
  spare_warming_ = false;
  if (spare_) spare_->Stop();
  spare_.reset();
  std::error_code ec;
  if (!spare_dir_.empty()) fs::remove_all(spare_dir_, ec);
  spare_dir_.clear();
}

void EvaluationSession::StartSpareCandidate(HarnessProcess::Options options,
                                            const nlohmann::json& warm) {
  if (!reuse_ || (spare_ && spare_->alive())) return;
  StopSpare();
  options.scratch_dir = dir_ / fmt::format("candidate-{}", ++spares_started_);
  std::error_code ec;
  fs::create_directories(options.scratch_dir, ec);
  auto p = HarnessProcess::Start(options);
  if (!p) {
    fs::remove_all(options.scratch_dir, ec);
    return;  // the evaluation starts its own, and reports why that fails
  }
  spare_.emplace(std::move(p).value());
  spare_dir_ = options.scratch_dir;
  spare_warming_ = !spare_->Send(warm).has_value();
  if (!spare_warming_) StopSpare();
}

void EvaluationSession::SettleSpare() {
  if (!spare_ || !spare_warming_) return;
  spare_warming_ = false;
  // Python, torch and a CUDA context: well under a minute on any host.
  constexpr std::chrono::seconds kWarmTimeout{180};
  auto reply = spare_->Receive(kWarmTimeout);
  if (std::holds_alternative<HarnessError>(reply)) StopSpare();
}

std::optional<HarnessProcess> EvaluationSession::TakeSpareCandidate(fs::path* scratch_dir) {
  SettleSpare();
  if (!spare_ || !spare_->alive()) {
    StopSpare();
    return std::nullopt;
  }
  std::optional<HarnessProcess> out = std::move(spare_);
  spare_.reset();
  *scratch_dir = spare_dir_;
  spare_dir_.clear();
  return out;
}

void EvaluationSession::ReturnSpareCandidate(HarnessProcess process, fs::path scratch_dir) {
  StopSpare();
  spare_.emplace(std::move(process));
  spare_dir_ = std::move(scratch_dir);
}

std::optional<EvaluationSession::FileStamp> EvaluationSession::Stamp(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  FileStamp s;
  s.inode = st.st_ino;
  s.size = st.st_size;
  s.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  s.ctime_ns = int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec;
  return s;
}

bool EvaluationSession::FileIntact(const fs::path& path) const {
  auto it = files_.find(path.string());
  if (it == files_.end()) return false;
  auto now = Stamp(path);
  return now && *now == it->second;
}

void EvaluationSession::RecordFile(const fs::path& path) {
  if (!reuse_) return;
  if (auto s = Stamp(path)) files_[path.string()] = *s;
}

void EvaluationSession::DropFile(const fs::path& path) {
  if (reuse_ && files_.count(path.string())) return;
  std::error_code ec;
  fs::remove(path, ec);
}

}  // namespace kforge
