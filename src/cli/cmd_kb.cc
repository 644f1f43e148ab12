// kforge kb show|export|import|merge: the knowledge base of one GPU
// architecture, as stored in the database (CONTRACT.md "kforge kb"). An
// architecture with nothing stored shows and exports the shipped default.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "common/files.h"
#include "kb/kb_store.h"
#include "run/run_store.h"

namespace kforge::cli {

namespace {

using nlohmann::json;

constexpr const char* kDefaultArch = "sm_90";

struct KbArgs {
  std::string db = run::kDefaultDb;
  std::string arch = kDefaultArch;
  std::string file;
  bool json = false;
  ConfigFlags config;
};

std::unique_ptr<Store> Open(const KbArgs& a, bool create) {
  Config config = LoadConfig(a.config);
  auto store = run::OpenRunStore(a.db, create, config);
  if (!store) throw OperationError{store.error()};
  return std::move(store).value();
}

// The stored knowledge base, or the shipped default when the architecture
// has none or there is no database yet.
kb::KnowledgeBase Load(const KbArgs& a, std::string* where) {
  Config config = LoadConfig(a.config);
  auto store = run::OpenRunStore(a.db, /*create=*/false, config);
  if (!store && store.error().kind != ErrorKind::kNotFound) throw OperationError{store.error()};
  auto kb = store ? kb::LoadKnowledgeBase(**store, a.arch) : kb::DefaultKnowledgeBase(a.arch);
  if (!kb) throw OperationError{kb.error()};
  *where = store ? (*store)->location() : "no database: the shipped default";
  return std::move(kb).value();
}

// The file's knowledge base, for `arch` (a file's own arch must agree unless
// it has none, as the shipped default).
kb::KnowledgeBase ReadKbFile(const std::string& path, const std::string& arch) {
  auto text = ReadFile(path);
  if (!text) throw OperationError{Error::BadInput(text.error().message)};
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded()) throw OperationError{Error::BadInput(path + ": not JSON")};
  auto kb = kb::KnowledgeBase::FromJson(j);
  if (!kb) throw OperationError{Error::BadInput(path + ": " + kb.error().message)};
  if (!kb->arch().empty() && kb->arch() != arch) {
    throw OperationError{
        Error::BadInput(fmt::format("{} is the knowledge base of {}, not {} (pass --arch {})", path,
                                    kb->arch(), arch, kb->arch()))};
  }
  j["arch"] = arch;
  return kb::KnowledgeBase::FromJson(j).value();
}

int RunShow(const KbArgs& a) {
  std::string where;
  kb::KnowledgeBase kb = Load(a, &where);
  if (a.json) {
    std::cout << kb.ToContractJson().dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("knowledge base of {} ({})\n", a.arch, where);
  for (const auto& [name, s] : kb.states()) {
    std::cout << fmt::format("\n{} — {}\n", name, s.description);
    for (const auto& o : s.optimizations) {
      std::cout << fmt::format("  {:28} gain {:.3f}x  {} of {} succeeded\n", o.technique,
                               o.PredictedGain(), o.successes, o.attempts);
    }
  }
  return 0;
}

int RunExport(const KbArgs& a) {
  std::string where;
  kb::KnowledgeBase kb = Load(a, &where);
  Status st = WriteFileAtomic(a.file, kb.ToJson().dump(2) + "\n");
  if (!st) throw OperationError{st.error()};
  std::cerr << fmt::format("exported the knowledge base of {} to {}\n", a.arch, a.file);
  return 0;
}

int RunImport(const KbArgs& a, bool merge) {
  kb::KnowledgeBase incoming = ReadKbFile(a.file, a.arch);
  auto store = Open(a, /*create=*/true);
  kb::KnowledgeBase result = incoming;
  if (merge) {
    auto stored = kb::LoadKnowledgeBase(*store, a.arch);
    if (!stored) throw OperationError{stored.error()};
    result = std::move(stored).value();
    result.Merge(incoming);
  }
  ThrowIfError(kb::SaveKnowledgeBase(*store, result));
  std::cerr << fmt::format("{} {} into the knowledge base of {} ({})\n",
                           merge ? "merged" : "imported", a.file, a.arch, store->location());
  return 0;
}

void AddCommon(CLI::App* cmd, KbArgs& args) {
  cmd->add_option("--arch", args.arch, "GPU architecture, e.g. sm_90")
      ->envname("KFORGE_ARCH")
      ->default_val(kDefaultArch);
  AddDbOption(cmd, args.db);
  AddConfigFlags(cmd, args.config);
}

}  // namespace

void AddKbCommand(CLI::App& root, CommandTable& table) {
  CLI::App* kb = root.add_subcommand("kb", "The knowledge base: performance states and what works");
  kb->require_subcommand(1);

  auto show = std::make_shared<KbArgs>();
  CLI::App* s = kb->add_subcommand("show", "Print the knowledge base of an architecture");
  AddCommon(s, *show);
  s->add_flag("--json", show->json, "print exactly one JSON object on stdout");
  s->callback([&table, show] { table.selected = [show] { return RunShow(*show); }; });

  auto exp = std::make_shared<KbArgs>();
  CLI::App* e = kb->add_subcommand("export", "Write the knowledge base to a file (kforge-kb JSON)");
  e->add_option("FILE", exp->file, "output file")->required();
  AddCommon(e, *exp);
  e->callback([&table, exp] { table.selected = [exp] { return RunExport(*exp); }; });

  auto imp = std::make_shared<KbArgs>();
  CLI::App* i = kb->add_subcommand("import", "Replace the stored knowledge base with a file's");
  i->add_option("FILE", imp->file, "kforge-kb JSON file")->required();
  AddCommon(i, *imp);
  i->callback([&table, imp] { table.selected = [imp] { return RunImport(*imp, false); }; });

  auto mrg = std::make_shared<KbArgs>();
  CLI::App* m = kb->add_subcommand("merge", "Add a file's statistics to the stored knowledge base");
  m->add_option("FILE", mrg->file, "kforge-kb JSON file")->required();
  AddCommon(m, *mrg);
  m->callback([&table, mrg] { table.selected = [mrg] { return RunImport(*mrg, true); }; });
}

}  // namespace kforge::cli
