#include "agent/agent_tools.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>

namespace kforge::agent {

using nlohmann::json;

namespace {

json StringProp(const std::string& description) {
  return {{"type", "string"}, {"description", description}};
}

json Object(json properties, std::vector<std::string> required) {
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", std::move(required)},
          {"additionalProperties", false}};
}

ToolResult Invalid(std::string text) {
  ToolResult r;
  r.text = "error: " + std::move(text);
  r.valid_call = false;
  return r;
}

ToolResult Text(std::string text) {
  ToolResult r;
  r.text = std::move(text);
  return r;
}

// A required string argument, or the message saying it is missing.
std::optional<std::string> Arg(const json& args, const char* name) {
  if (!args.contains(name) || !args[name].is_string()) return std::nullopt;
  return args[name].get<std::string>();
}

ToolResult Check(const char* what, CheckReport report) {
  ToolResult r;
  r.text = fmt::format("{}: {}\n{}", what, report.ok ? "ok" : "failed", report.summary);
  r.check = std::move(report.detail);
  return r;
}

}  // namespace

std::vector<llm::ToolDefinition> AgentToolDefinitions(const std::string& candidate_file) {
  const json path = StringProp("a path relative to the workspace, e.g. " + candidate_file);
  const json none = Object(json::object(), {});
  return {
      {kToolListFiles, "List the files of your workspace.", none},
      {kToolReadFile, "Read a file of your workspace.", Object({{"path", path}}, {"path"})},
      {kToolWriteFile, "Create or overwrite a file of your workspace with the given content.",
       Object({{"path", path}, {"content", StringProp("the whole new content")}},
              {"path", "content"})},
      {kToolEditFile,
       "Replace the one occurrence of old_text in a file with new_text (old_text must occur "
       "exactly once: include enough context).",
       Object({{"path", path},
               {"old_text", StringProp("the exact text to replace")},
               {"new_text", StringProp("what replaces it")}},
              {"path", "old_text", "new_text"})},
      {kToolCompile, "Build " + candidate_file + " and report compiler errors and warnings.", none},
      {kToolVerify,
       "Build " + candidate_file +
           " and check its outputs against the reference on several inputs (no timing).",
       none},
      {kToolProfile,
       "Build, verify and time " + candidate_file +
           " against the reference (eager and torch.compile), with a profile summary where "
           "there is one.",
       none},
      {kToolSubmit,
       "Submit " + candidate_file +
           " as your answer. This ends your work on it: it is then evaluated in full, integrity "
           "checks included.",
       none},
  };
}

ToolResult RunTool(const llm::ToolCall& call, const std::string& candidate_file,
                   AgentWorkspace& workspace, CandidateChecker& checker) {
  json args = call.arguments_json.empty() ? json::object()
                                          : json::parse(call.arguments_json, nullptr, false);
  if (args.is_discarded() || !args.is_object()) {
    return Invalid(fmt::format("the arguments of {} are not a JSON object", call.name));
  }
  const std::string& name = call.name;
  if (name == kToolListFiles) {
    auto files = workspace.List();
    return Text(files.empty() ? "(no files)" : fmt::format("{}", fmt::join(files, "\n")));
  }
  if (name == kToolReadFile) {
    auto path = Arg(args, "path");
    if (!path) return Invalid("read_file needs a string 'path'");
    auto text = workspace.Read(*path);
    return text ? Text(*text) : Text("error: " + text.error().message);
  }
  if (name == kToolWriteFile) {
    auto path = Arg(args, "path");
    auto content = Arg(args, "content");
    if (!path || !content) return Invalid("write_file needs string 'path' and 'content'");
    Status st = workspace.Write(*path, *content);
    return st ? Text(fmt::format("wrote {} ({} bytes)", *path, content->size()))
              : Text("error: " + st.error().message);
  }
  if (name == kToolEditFile) {
    auto path = Arg(args, "path");
    auto old_text = Arg(args, "old_text");
    auto new_text = Arg(args, "new_text");
    if (!path || !old_text || !new_text) {
      return Invalid("edit_file needs string 'path', 'old_text' and 'new_text'");
    }
    Status st = workspace.Edit(*path, *old_text, *new_text);
    return st ? Text(fmt::format("edited {}", *path)) : Text("error: " + st.error().message);
  }
  const bool check = name == kToolCompile || name == kToolVerify || name == kToolProfile;
  if (check || name == kToolSubmit) {
    auto source = workspace.Read(candidate_file);
    if (!source) {
      return Text(
          fmt::format("error: {} (write {} first)", source.error().message, candidate_file));
    }
    if (name == kToolCompile) return Check("compile", checker.Compile(*source));
    if (name == kToolVerify) return Check("verify", checker.Verify(*source));
    if (name == kToolProfile) return Check("profile", checker.Profile(*source));
    ToolResult r = Text(fmt::format("submitted {} ({} bytes)", candidate_file, source->size()));
    r.submitted = true;
    r.submitted_source = std::move(source).value();
    return r;
  }
  return Invalid(fmt::format("there is no tool '{}' (tools: {}, {}, {}, {}, {}, {}, {}, {})", name,
                             kToolListFiles, kToolReadFile, kToolWriteFile, kToolEditFile,
                             kToolCompile, kToolVerify, kToolProfile, kToolSubmit));
}

}  // namespace kforge::agent
