// One conversation's current branch as Markdown: a heading per turn, each
// answer followed by one line of what produced it and how fast, and the
// system prompt (as sent) quoted where it first appears or changes.
#include <cstdio>
#include <string>

#include "store/store_impl.h"

namespace hearth::store {

namespace {

std::string number(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string quoted(const std::string& text) {
  std::string out = "> ";
  for (const char c : text) {
    out += c;
    if (c == '\n') out += "> ";
  }
  return out + "\n\n";
}

std::string role_heading(Role role) {
  switch (role) {
    case Role::kSystem:
      return "## System\n\n";
    case Role::kUser:
      return "## User\n\n";
    case Role::kAssistant:
      return "## Assistant\n\n";
  }
  return "## User\n\n";
}

std::string generation_line(const GenerationRecord& g, const std::string& prompt) {
  std::string line = "*" + (g.model_name.empty() ? g.model_path : g.model_name);
  if (!g.quantization.empty()) line += " " + g.quantization;
  if (!prompt.empty()) line += " · prompt " + prompt;
  line += " · " + std::to_string(g.generated_tokens) + " tokens";
  line += " · TTFT " + number(g.ttft_ms, "%.0f") + " ms";
  line += " · " + number(g.decode_tok_s, "%.1f") + " tok/s";
  if (!g.finish_reason.empty()) line += " · " + g.finish_reason;
  return line + "*\n\n";
}

}  // namespace

StoreResult<std::string> Store::export_markdown(Id conversation_id) {
  STORE_ASSIGN_OR_RETURN(const Conversation c, get_conversation(conversation_id));
  STORE_ASSIGN_OR_RETURN(const std::vector<Message> path, current_path(conversation_id));
  std::string out = "# " + (c.title.empty() ? std::string("Untitled conversation") : c.title) + "\n\n";
  std::vector<std::optional<GenerationRecord>> generations;
  for (const Message& m : path) {
    STORE_ASSIGN_OR_RETURN(std::optional<GenerationRecord> g, get_generation(m.id));
    generations.push_back(std::move(g));
  }
  std::string last_system;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const Message& m = path[i];
    const std::optional<GenerationRecord>& g = generations[i];
    // The system prompt of the next answer goes before the turn that led to it.
    const std::optional<GenerationRecord>& next = i + 1 < path.size() ? generations[i + 1] : g;
    if (next && !next->system_text.empty() && next->system_text != last_system) {
      out += "**System prompt**\n\n" + quoted(next->system_text);
      last_system = next->system_text;
    }
    out += role_heading(m.role) + m.content + "\n\n";
    if (m.state == MessageState::kInterrupted) out += "*(interrupted)*\n\n";
    if (!g) continue;
    std::string prompt;
    if (g->prompt_version_id) {
      auto v = get_prompt_version(*g->prompt_version_id);
      auto p = v ? get_prompt(v->prompt_id) : StoreResult<Prompt>(v.error());
      if (p) prompt = p->name + "@" + std::to_string(v->version);
    }
    out += generation_line(*g, prompt);
  }
  return out;
}

}  // namespace hearth::store
