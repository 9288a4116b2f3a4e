#include "models/catalog.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace hearth::models {
namespace {

TEST(Catalog, BuiltinHasDefaultModel) {
  const Catalog& c = builtin_catalog();
  ASSERT_FALSE(c.entries.empty());
  const CatalogEntry& d = c.default_entry();
  EXPECT_EQ(d.name, "smollm2-135m-instruct-q4_1");
  EXPECT_EQ(d.architecture, "llama");
  EXPECT_EQ(d.sha256.size(), 64u);
  EXPECT_GT(d.size_bytes, 0u);
}

TEST(Catalog, RejectsMalformed) {
  EXPECT_FALSE(parse_catalog("[1,2]").ok());
  EXPECT_FALSE(parse_catalog("{\"default\": \"x\", \"models\": []}").ok());
  auto r = parse_catalog("{\"default\": \"x\", \"models\": [{\"name\": \"x\"}]}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("catalog"), std::string::npos);
}

TEST(Catalog, ResolvesNamesInModelsDir) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("hearth-catalog-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ::setenv("HEARTH_MODELS_DIR", dir.c_str(), 1);
  const CatalogEntry& d = builtin_catalog().default_entry();
  auto missing = resolve_model(d.name);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find(dir.string()), std::string::npos);
  { std::ofstream(dir / d.file) << "x"; }
  auto found = resolve_model(d.name);
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(*found, dir / d.file);
  auto by_default = resolve_model("default");  // the catalog's default model, by that word
  ASSERT_TRUE(by_default.ok()) << by_default.error().message;
  EXPECT_EQ(*by_default, dir / d.file);
  auto listed = installed_models();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].entry, &d);
  EXPECT_FALSE(resolve_model("no-such-model").ok());
  fs::remove_all(dir);
  ::unsetenv("HEARTH_MODELS_DIR");
}

TEST(Catalog, Sha256OfFile) {
  namespace fs = std::filesystem;
  const fs::path f = fs::temp_directory_path() / ("hearth-sha-" + std::to_string(::getpid()));
  { std::ofstream(f, std::ios::binary) << "abc"; }
  auto h = sha256_file(f);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(*h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  fs::remove(f);
  EXPECT_EQ(sha256_file(f).error().code, ErrorCode::kIo);
}

}  // namespace
}  // namespace hearth::models
