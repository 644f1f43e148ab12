#include "search/baseline/task_prompt.h"

#include <fmt/format.h>

#include "search/baseline/attempt_feedback.h"

namespace kforge::search {

Result<TaskPrompt> TaskPrompt::Create(const StrategyContext& ctx,
                                      const PromptTemplates& templates) {
  if (ctx.device != "cuda" && ctx.device != "cpu") {
    return Error::BadInput(fmt::format("no prompt format for device '{}'", ctx.device));
  }
  if (ctx.policy != "strict" && ctx.policy != "any") {
    return Error::BadInput(fmt::format("no prompt for policy '{}'", ctx.policy));
  }
  const bool native = ctx.format == "native";
  if (native && ctx.device != "cuda") {
    return Error::BadInput("the native candidate format needs a cuda device");
  }
  TaskPrompt p;
  p.templates_ = templates;
  p.hardware_name_ = ctx.hardware;
  // A native answer is CUDA C++; models label such fences in several ways.
  p.code_langs_ = native ? std::vector<std::string>{"cuda", "cu", "cpp", "c++"}
                         : std::vector<std::string>{"python"};
  auto render = [&](const std::string& name, std::string& out,
                    const std::map<std::string, std::string>& vars = {}) -> Status {
    auto text = templates.Render(name, vars);
    if (!text) return text.error();
    out = std::move(text).value();
    return Status::Ok();
  };
  for (Status st :
       {render("system", p.system_),
        render(native ? std::string("format_native") : "format_" + ctx.device, p.format_),
        // The native format states its own limits (no PyTorch at all).
        native ? Status::Ok() : render("policy_" + ctx.policy, p.policy_),
        render("rules", p.rules_),
        render("task", p.task_, {{"task_name", ctx.task_name}, {"task_source", ctx.task_source}}),
        render(native ? "answer_native" : "answer", p.answer_)}) {
    if (!st) return st.error();
  }
  // Rendered per prompt (the baseline becomes known); checked here.
  std::string unused;
  if (Status st = render("hardware", unused, {{"hardware", ctx.hardware}, {"baseline", ""}}); !st) {
    return st.error();
  }
  return p;
}

void TaskPrompt::AddHead(llm::Prompt& prompt, const std::string& baseline) const {
  prompt.System("role", system_);
  prompt.Text("format", format_);
  if (!policy_.empty()) prompt.Text("policy", policy_);
  prompt.Text("rules", rules_);
  prompt.Text("task", task_);
  auto hardware =
      templates_.Render("hardware", {{"hardware", hardware_name_}, {"baseline", baseline}});
  // Create() rendered this template with the same placeholders, so it cannot fail here.
  prompt.Text("hardware", hardware ? *hardware : "Hardware: " + hardware_name_);
}

void TaskPrompt::AddAnswer(llm::Prompt& prompt) const {
  prompt.Text("answer", answer_);
}

std::string TaskPrompt::Fenced(const std::string& source) const {
  return FencedCode(source, code_langs_.front());
}

}  // namespace kforge::search
