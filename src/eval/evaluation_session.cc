#include "eval/evaluation_session.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
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
  StopSpares();
}

void EvaluationSession::StopSpare(Spare& spare) {
  spare.process.Kill();  // a spare holds nothing: no need to wait for it to quit
  std::error_code ec;
  fs::remove_all(spare.dir, ec);
}

void EvaluationSession::StopSpares() {
  for (Spare& spare : spares_) StopSpare(spare);
  spares_.clear();
}

bool EvaluationSession::Settle(Spare& spare, bool wait) {
  if (!spare.process.alive()) return false;
  if (!spare.warming) return true;
  if (!wait && !spare.process.ReplyReady()) return true;
  // Python, torch and a CUDA context: well under a minute on any host.
  constexpr std::chrono::seconds kWarmTimeout{180};
  spare.warming = false;
  return std::holds_alternative<nlohmann::json>(spare.process.Receive(kWarmTimeout));
}

void EvaluationSession::StartSpareCandidates(const HarnessProcess::Options& options,
                                             const nlohmann::json& warm, int pool_size) {
  if (!reuse_) return;
  SettleSpares();
  while (static_cast<int>(spares_.size()) < pool_size) {
    HarnessProcess::Options o = options;
    o.scratch_dir = dir_ / fmt::format("candidate-{}", ++spares_started_);
    std::error_code ec;
    fs::create_directories(o.scratch_dir, ec);
    auto p = HarnessProcess::Start(o);
    if (!p) {
      fs::remove_all(o.scratch_dir, ec);
      return;  // an evaluation starts its own, and reports why that fails
    }
    Spare spare{std::move(p).value(), o.scratch_dir};
    if (spare.process.Send(warm)) {  // an error: it is already gone
      StopSpare(spare);
      return;
    }
    spares_.push_back(std::move(spare));
  }
}

int EvaluationSession::PauseSpares() {
  int paused = 0;
  for (Spare& spare : spares_) {
    if (spare.paused || !spare.warming || !spare.process.alive()) continue;
    if (spare.process.ReplyReady()) continue;  // warm: it waits on its channel
    spare.process.Freeze();
    spare.paused = true;
    ++paused;
  }
  return paused;
}

void EvaluationSession::ResumeSpares() {
  for (Spare& spare : spares_) {
    if (!spare.paused) continue;
    spare.process.Thaw();
    spare.paused = false;
  }
}

void EvaluationSession::SettleSpares() {
  std::erase_if(spares_, [](Spare& spare) {
    if (Settle(spare, /*wait=*/false)) return false;
    StopSpare(spare);
    return true;
  });
}

std::optional<HarnessProcess> EvaluationSession::TakeSpareCandidate(fs::path* scratch_dir) {
  SettleSpares();
  if (spares_.empty()) return std::nullopt;
  // The first warm one; else the oldest, waited for.
  auto it = std::find_if(spares_.begin(), spares_.end(), [](const Spare& s) { return !s.warming; });
  if (it == spares_.end()) {
    it = spares_.begin();
    if (!Settle(*it, /*wait=*/true)) {
      StopSpare(*it);
      spares_.erase(it);
      return std::nullopt;  // the evaluation starts its own
    }
  }
  std::optional<HarnessProcess> out = std::move(it->process);
  *scratch_dir = std::move(it->dir);
  spares_.erase(it);
  return out;
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
