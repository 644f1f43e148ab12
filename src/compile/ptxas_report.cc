#include "compile/ptxas_report.h"

#include <regex>
#include <sstream>

namespace kforge::compile {

namespace {

int64_t Number(const std::string& line, const std::regex& re) {
  std::smatch m;
  if (!std::regex_search(line, m, re)) return 0;
  return std::stoll(m[1].str());
}

}  // namespace

nlohmann::json KernelResources::ToJson() const {
  return {{"name", name},
          {"arch", arch},
          {"registers", registers},
          {"barriers", barriers},
          {"shared_bytes", shared_bytes},
          {"constant_bytes", constant_bytes},
          {"stack_frame_bytes", stack_frame_bytes},
          {"spill_store_bytes", spill_store_bytes},
          {"spill_load_bytes", spill_load_bytes}};
}

std::vector<KernelResources> ParsePtxasLog(std::string_view log) {
  // ptxas info    : Compiling entry function '_Z3addPfS_' for 'sm_90a'
  // ptxas info    : Function properties for _Z3addPfS_
  //     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  // ptxas info    : Used 8 registers, used 1 barriers, 1024 bytes smem, 368 bytes cmem[0]
  static const std::regex kEntry(R"(Compiling entry function '([^']+)' for '([^']+)')");
  static const std::regex kProperties(R"(Function properties for (\S+))");
  static const std::regex kStack(R"((\d+) bytes stack frame)");
  static const std::regex kSpillStores(R"((\d+) bytes spill stores)");
  static const std::regex kSpillLoads(R"((\d+) bytes spill loads)");
  static const std::regex kRegisters(R"(Used (\d+) registers)");
  static const std::regex kBarriers(R"(used (\d+) barriers)");
  static const std::regex kSmem(R"((\d+) bytes smem)");
  static const std::regex kCmem(R"((\d+) bytes cmem\[0\])");

  std::vector<KernelResources> out;
  KernelResources* current = nullptr;
  bool in_properties = false;
  std::istringstream in{std::string(log)};
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kEntry)) {
      out.push_back(KernelResources{m[1].str(), m[2].str()});
      current = &out.back();
      in_properties = false;
      continue;
    }
    if (std::regex_search(line, m, kProperties)) {
      // Properties of the entry being compiled (device functions get their own
      // block too; those are not entries and are skipped).
      in_properties = current && m[1].str() == current->name;
      continue;
    }
    if (!current) continue;
    if (in_properties && line.find("stack frame") != std::string::npos) {
      current->stack_frame_bytes = Number(line, kStack);
      current->spill_store_bytes = Number(line, kSpillStores);
      current->spill_load_bytes = Number(line, kSpillLoads);
      in_properties = false;
      continue;
    }
    if (line.find("Used ") != std::string::npos && line.find("registers") != std::string::npos) {
      current->registers = Number(line, kRegisters);
      current->barriers = Number(line, kBarriers);
      current->shared_bytes = Number(line, kSmem);
      current->constant_bytes = Number(line, kCmem);
    }
  }
  return out;
}

}  // namespace kforge::compile
