// hearth-cli inspect MODEL [--json] [--scales]: what a GGUF file holds: architecture,
// hyper-parameters, tokenizer summary, chat template, every metadata key and
// every tensor, with totals. The JSON form is the contract other checks use
// (tests/cli/inspect_oracle.py compares it with the Python gguf reader).
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/gguf_json.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/quant_scales.h"
#include "models/catalog.h"

namespace hearth::cli {
namespace {

using nlohmann::json;

struct InspectOptions {
  std::string model;
  bool json = false;
  bool all_arrays = false;
  bool scales = false;
};

// Layer type -> the distribution of its quantization scales (engine/gguf/quant_scales.h).
json scales_json(const gguf::GgufFile& f) {
  json out = json::object();
  if (f.incomplete()) return out;  // the tensor data is not all there
  for (const auto& [type, s] : gguf::scale_statistics(f)) {
    out[type] = {{"tensors", s.tensors}, {"count", s.count}, {"mean", s.mean},  {"stddev", s.stddev},
                 {"min", s.min},         {"max", s.max},     {"types", s.types}};
  }
  return out;
}

void print_scales(const json& scales) {
  std::printf("quantization scales by layer type (effective block / sub-block scale)\n");
  std::printf("  %-24s %-14s %8s %10s %12s %12s %12s %12s\n", "layer type", "types", "tensors", "scales", "mean",
              "stddev", "min", "max");
  for (const auto& [type, s] : scales.items()) {
    std::string types;
    for (const auto& [t, n] : s["types"].items()) types += (types.empty() ? "" : ",") + t;
    std::printf("  %-24s %-14s %8llu %10llu %12.4g %12.4g %12.4g %12.4g\n", type.c_str(), types.c_str(),
                s["tensors"].get<unsigned long long>(), s["count"].get<unsigned long long>(), s["mean"].get<double>(),
                s["stddev"].get<double>(), s["min"].get<double>(), s["max"].get<double>());
  }
}

// Keys under "<arch>." are the hyper-parameters; the prefix is dropped.
json hyper_parameters(const gguf::GgufFile& f, std::string_view arch) {
  json out = json::object();
  const std::string prefix = std::string(arch) + ".";
  for (const auto& kv : f.metadata()) {
    if (kv.key.substr(0, prefix.size()) == prefix)
      out[std::string(kv.key.substr(prefix.size()))] = value_json(kv.value, 8);
  }
  return out;
}

json tokenizer_summary(const gguf::GgufFile& f) {
  json t = json::object();
  if (auto m = f.get_string("tokenizer.ggml.model")) t["model"] = std::string(*m);
  if (auto p = f.get_string("tokenizer.ggml.pre")) t["pre"] = std::string(*p);
  auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  t["vocab_size"] = tokens ? tokens->size() : 0;
  if (auto merges = f.get_string_array("tokenizer.ggml.merges")) t["merges"] = merges->size();
  json special = json::object();
  for (const char* role : {"bos", "eos", "eot", "eom", "unknown", "padding", "sep", "mask"}) {
    auto id = f.get_uint(std::string("tokenizer.ggml.") + role + "_token_id");
    if (!id) continue;
    json s = {{"id", *id}};
    if (tokens && *id < tokens->size()) s["text"] = std::string((*tokens)[*id]);
    special[role] = s;
  }
  t["special_tokens"] = special;
  for (const char* flag : {"add_bos_token", "add_eos_token", "add_space_prefix"}) {
    if (auto b = f.get<bool>(std::string("tokenizer.ggml.") + flag)) t[flag] = *b;
  }
  return t;
}

json inspect_json(const gguf::GgufFile& f, const InspectOptions& opt) {
  json doc;
  doc["path"] = f.path().string();
  doc["version"] = f.version();
  doc["alignment"] = f.alignment();
  doc["data_offset"] = f.data_offset();
  doc["file_size"] = f.file_size();
  // An interrupted download: metadata and tensor infos whole, tensor data cut short.
  doc["incomplete"] = f.incomplete();
  if (f.incomplete()) doc["file_size_needed"] = f.data_end();
  const std::string arch(f.get_string("general.architecture") ? *f.get_string("general.architecture") : "");
  doc["architecture"] = arch;
  if (auto name = f.get_string("general.name")) doc["name"] = std::string(*name);
  doc["hyper_parameters"] = hyper_parameters(f, arch);
  doc["tokenizer"] = tokenizer_summary(f);
  doc["chat_template"] = f.get_string("tokenizer.chat_template")
                             ? json(std::string(*f.get_string("tokenizer.chat_template")))
                             : json(nullptr);
  json metadata = json::array();
  for (const auto& kv : f.metadata()) {
    metadata.push_back({{"key", std::string(kv.key)},
                        {"type", gguf::to_string(kv.value.type())},
                        {"value", value_json(kv.value, opt.all_arrays ? SIZE_MAX : 16)}});
  }
  doc["metadata"] = metadata;
  json tensors = json::array();
  std::uint64_t total_bytes = 0, total_elems = 0;
  std::map<std::string, std::uint64_t> bytes_by_type;
  for (const auto& t : f.tensors()) {
    const std::string type = gguf::ggml_type_name(t.type);
    tensors.push_back({{"name", std::string(t.name)},
                       {"type", type},
                       {"shape", std::vector<std::int64_t>(t.ne.begin(), t.ne.begin() + t.n_dims)},
                       {"offset", t.file_offset},
                       {"bytes", t.n_bytes}});
    total_bytes += t.n_bytes;
    total_elems += t.n_elements;
    bytes_by_type[type] += t.n_bytes;
  }
  doc["tensors"] = tensors;
  doc["totals"] = {{"tensors", f.tensors().size()},
                   {"parameters", total_elems},
                   {"tensor_bytes", total_bytes},
                   {"bytes_by_type", bytes_by_type}};
  return doc;
}

void print_text(const json& doc) {
  std::printf("file          %s\n", doc["path"].get<std::string>().c_str());
  std::printf("GGUF          v%u, alignment %u, data at byte %llu, %.1f MiB\n", doc["version"].get<unsigned>(),
              doc["alignment"].get<unsigned>(), doc["data_offset"].get<unsigned long long>(),
              static_cast<double>(doc["file_size"].get<std::uint64_t>()) / (1 << 20));
  if (doc["incomplete"].get<bool>()) {
    std::printf("INCOMPLETE    %llu of %llu bytes present (the tensor data ends at byte %llu): metadata only\n",
                doc["file_size"].get<unsigned long long>(), doc["file_size_needed"].get<unsigned long long>(),
                doc["file_size_needed"].get<unsigned long long>());
  }
  std::printf("architecture  %s%s%s\n", doc["architecture"].get<std::string>().c_str(),
              doc.contains("name") ? "  ·  " : "", doc.contains("name") ? doc["name"].get<std::string>().c_str() : "");
  std::printf("\nhyper-parameters\n");
  for (const auto& [k, v] : doc["hyper_parameters"].items()) std::printf("  %-36s %s\n", k.c_str(), v.dump().c_str());
  std::printf("\ntokenizer\n");
  for (const auto& [k, v] : doc["tokenizer"].items()) std::printf("  %-36s %s\n", k.c_str(), v.dump().c_str());
  std::printf("\nchat template\n");
  if (doc["chat_template"].is_null()) {
    std::printf("  (none)\n");
  } else {
    std::printf("%s\n", doc["chat_template"].get<std::string>().c_str());
  }
  std::printf("\nmetadata (%zu keys)\n", doc["metadata"].size());
  for (const auto& kv : doc["metadata"]) {
    std::string v = kv["value"].dump();
    if (v.size() > 100) v = v.substr(0, 97) + "...";
    std::printf("  %-40s %-7s %s\n", kv["key"].get<std::string>().c_str(), kv["type"].get<std::string>().c_str(),
                v.c_str());
  }
  std::printf("\ntensors (%zu)\n  %-36s %-6s %-18s %14s %12s\n", doc["tensors"].size(), "name", "type", "shape",
              "offset", "bytes");
  for (const auto& t : doc["tensors"]) {
    std::printf("  %-36s %-6s %-18s %14llu %12llu\n", t["name"].get<std::string>().c_str(),
                t["type"].get<std::string>().c_str(), t["shape"].dump().c_str(), t["offset"].get<unsigned long long>(),
                t["bytes"].get<unsigned long long>());
  }
  const json& totals = doc["totals"];
  std::printf("\ntotals: %zu tensors, %.1f M parameters, %.1f MiB of tensor data\n",
              totals["tensors"].get<std::size_t>(),
              static_cast<double>(totals["parameters"].get<std::uint64_t>()) / 1e6,
              static_cast<double>(totals["tensor_bytes"].get<std::uint64_t>()) / (1 << 20));
  for (const auto& [type, bytes] : totals["bytes_by_type"].items()) {
    std::printf("  %-6s %10.1f MiB\n", type.c_str(), static_cast<double>(bytes.get<std::uint64_t>()) / (1 << 20));
  }
}

void run_inspect(const InspectOptions& opt) {
  const auto path = unwrap(models::resolve_model(opt.model));
  const auto file = unwrap(gguf::GgufFile::open(path, gguf::OpenOptions{true}));
  json doc = inspect_json(*file, opt);
  if (opt.scales) doc["scales"] = scales_json(*file);
  if (opt.json) {
    std::cout << doc.dump(1) << "\n";
  } else if (opt.scales) {
    print_scales(doc["scales"]);
  } else {
    print_text(doc);
  }
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto opt = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand("inspect", "Show a model's metadata, tokenizer, chat template and tensors");
  cmd->add_option("model", opt->model, "Path to a .gguf file or a catalog name")->required();
  cmd->add_flag("--json", opt->json, "Print JSON");
  cmd->add_flag("--all-arrays", opt->all_arrays, "Print arrays in full (default: the first 16 elements)");
  cmd->add_flag("--scales", opt->scales,
                "The quantization scales' mean and standard deviation per layer type (text: only that table; "
                "--json: a \"scales\" object)");
  cmd->callback([opt] { run_inspect(*opt); });
}

}  // namespace hearth::cli
