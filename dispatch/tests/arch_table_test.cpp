#include <functional>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pmqa/dispatch/arch_table.hpp"

namespace pd = pmqa::dispatch;
using nlohmann::json;
using pmqa::Fp8Format;

namespace {

const pd::ArchInfo& info(const char* target) { return pd::ArchTable::builtin().at(target); }

bool has_product(const pd::ArchInfo& i, const std::string& p) {
  for (const auto& x : i.products)
    if (x == p) return true;
  return false;
}

// The built-in table with one change planted; returns the error message parse gives (or "" if none).
std::string parse_error_after(const std::function<void(json&)>& plant) {
  json doc = json::parse(pd::ArchTable::builtin_json());
  plant(doc);
  try {
    (void)pd::ArchTable::parse(doc.dump(), "planted.json");
  } catch (const pd::ArchTableError& e) {
    return e.what();
  }
  return "";
}

json& entry(json& doc, const std::string& target) {
  for (auto& e : doc["archs"])
    if (e["target"] == target) return e;
  throw std::runtime_error("no entry " + target);
}

}  // namespace

TEST(ArchTable, BuiltinHasTheIssuesTargets) {
  const std::set<std::string> expected = {"gfx90a", "gfx940", "gfx941", "gfx942",  "gfx950", "gfx1100", "gfx1101",
                                          "gfx1200", "gfx1201", "gfx1250", "sm_89", "sm_90", "sm_100"};
  const auto targets = pd::ArchTable::builtin().targets();
  EXPECT_EQ(std::set<std::string>(targets.begin(), targets.end()), expected);
  EXPECT_EQ(targets.size(), expected.size());
  EXPECT_EQ(pd::ArchTable::builtin_source(), "dispatch/data/arch_table.json");
}

// Spec §3: which hardware uses which fp8 format. Written from the spec, not from the table.
TEST(ArchTable, Fp8FormatsFollowSpecSection3) {
  for (const char* t : {"gfx940", "gfx941", "gfx942"}) EXPECT_EQ(info(t).fp8, Fp8Format::e4m3fnuz) << t;
  for (const char* t : {"gfx950", "gfx1200", "gfx1201", "gfx1250", "sm_89", "sm_90", "sm_100"})
    EXPECT_EQ(info(t).fp8, Fp8Format::e4m3fn) << t;
  for (const char* t : {"gfx90a", "gfx1100", "gfx1101"}) {
    EXPECT_FALSE(info(t).has_fp8()) << t;
    EXPECT_FALSE(info(t).has_fp8_matrix()) << t;
  }
}

TEST(ArchTable, WaveSizesAndMatrixUnits) {
  for (const char* t : {"gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"}) EXPECT_EQ(info(t).wave_size, 64) << t;
  for (const char* t : {"gfx1100", "gfx1101", "gfx1200", "gfx1201", "gfx1250", "sm_89", "sm_90", "sm_100"})
    EXPECT_EQ(info(t).wave_size, 32) << t;
  for (const char* t : {"gfx940", "gfx941", "gfx942", "gfx950"}) EXPECT_EQ(info(t).fp8_matrix, pmqa::MatrixKind::mfma) << t;
  for (const char* t : {"gfx1200", "gfx1201", "gfx1250"}) EXPECT_EQ(info(t).fp8_matrix, pmqa::MatrixKind::wmma) << t;
  EXPECT_EQ(info("sm_89").fp8_matrix, pmqa::MatrixKind::mma_sync);
  EXPECT_EQ(info("sm_90").fp8_matrix, pmqa::MatrixKind::wgmma);
  EXPECT_EQ(info("sm_100").fp8_matrix, pmqa::MatrixKind::tcgen05);
}

TEST(ArchTable, ProductsNameTheHardwareCiJobsUse) {
  EXPECT_TRUE(has_product(info("gfx942"), "MI300X"));
  EXPECT_TRUE(has_product(info("gfx942"), "MI325X"));
  EXPECT_TRUE(has_product(info("gfx950"), "MI355X"));
  EXPECT_TRUE(has_product(info("gfx90a"), "MI250X"));
  EXPECT_TRUE(has_product(info("gfx1100"), "Radeon RX 7900 XTX"));
  EXPECT_TRUE(has_product(info("gfx1201"), "Radeon RX 9070 XT"));
  EXPECT_TRUE(has_product(info("sm_90"), "H200"));
  EXPECT_TRUE(has_product(info("sm_100"), "B200"));
  EXPECT_TRUE(has_product(info("sm_89"), "L40S"));
  EXPECT_EQ(info("gfx950").label(), "gfx950 (MI350X/MI355X)");
}

TEST(ArchTable, KernelLibrariesPerSpecSection4) {
  // AITER enables its Gluon kernels on gfx942, gfx950 and gfx1250; DeepGEMM's kernel runs on sm_90/sm_100.
  std::set<std::string> with_fused;
  for (const auto& e : pd::ArchTable::builtin().entries())
    if (e.fused_kernel_library) with_fused.insert(e.target);
  EXPECT_EQ(with_fused, (std::set<std::string>{"gfx942", "gfx950", "gfx1250", "sm_90", "sm_100"}));
  EXPECT_EQ(info("gfx1250").fused_kernel_library, "AITER");
  EXPECT_EQ(info("sm_90").fused_kernel_library, "DeepGEMM");
  EXPECT_NE(info("gfx1250").note.find("two-stage"), std::string::npos) << "gfx1250's note records the observation";
}

TEST(ArchTable, UnknownTargetIsAnErrorListingTheKnownOnes) {
  try {
    (void)pd::ArchTable::builtin().at(pd::parse_arch("gfx1300:xnack-"));
    FAIL() << "gfx1300 found";
  } catch (const pd::UnknownArchError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.arch(), "gfx1300:xnack-");
    EXPECT_NE(what.find("\"gfx1300:xnack-\""), std::string::npos) << what;
    for (const char* t : {"gfx942", "gfx950", "sm_90", "sm_100"}) EXPECT_NE(what.find(t), std::string::npos) << what;
    EXPECT_NE(what.find("never a fallback"), std::string::npos) << what;
    EXPECT_EQ(e.known().size(), 13u);
  }
  EXPECT_EQ(pd::ArchTable::builtin().find("gfx908"), nullptr);
}

TEST(ArchTable, ParsingTheBuiltinTextTwiceGivesTheSameTable) {
  const auto again = pd::ArchTable::parse(pd::ArchTable::builtin_json(), "copy");
  EXPECT_EQ(again.targets(), pd::ArchTable::builtin().targets());
}

// Each planted fault in the table is a hard error naming the entry and the field.
TEST(ArchTable, MalformedTablesAreHardErrorsNamingTheEntry) {
  struct Plant {
    const char* what;
    std::function<void(json&)> plant;
    std::vector<std::string> message_parts;
  };
  const std::vector<Plant> plants = {
      {"wave size 48", [](json& d) { entry(d, "gfx942")["wave_size"] = 48; },
       {"planted.json: entry 3 (gfx942)", "field \"wave_size\" must be 32 or 64, got 48"}},
      {"typo in fp8", [](json& d) { entry(d, "gfx950")["fp8"] = "fnuz"; }, {"entry 4 (gfx950)", "field \"fp8\""}},
      {"duplicate target", [](json& d) { entry(d, "gfx941")["target"] = "gfx940"; }, {"entry 2 (gfx940)", "appears twice"}},
      {"unknown field", [](json& d) { entry(d, "sm_90")["wavesize"] = 32; }, {"(sm_90)", "unknown field \"wavesize\""}},
      {"missing field", [](json& d) { entry(d, "gfx1201").erase("products"); }, {"(gfx1201)", "\"products\" is missing"}},
      {"empty products", [](json& d) { entry(d, "gfx1201")["products"] = json::array(); }, {"(gfx1201)", "products"}},
      {"vendor mismatch", [](json& d) { entry(d, "sm_89")["vendor"] = "amd"; }, {"(sm_89)", "field \"vendor\""}},
      {"flags in target", [](json& d) { entry(d, "gfx942")["target"] = "gfx942:xnack-"; }, {"bare target"}},
      {"malformed target", [](json& d) { entry(d, "gfx942")["target"] = "gfx942:"; }, {"not a valid arch"}},
      {"FNUZ on NVIDIA", [](json& d) { entry(d, "sm_90")["fp8"] = "e4m3fnuz"; }, {"(sm_90)", "no NVIDIA arch"}},
      {"matrix without fp8", [](json& d) { entry(d, "gfx90a")["fp8_matrix"] = "mfma"; }, {"(gfx90a)", "fp8_matrix"}},
      {"wgmma on AMD", [](json& d) { entry(d, "gfx942")["fp8_matrix"] = "wgmma"; }, {"(gfx942)", "amd hardware"}},
      {"NVIDIA wave 64", [](json& d) { entry(d, "sm_90")["wave_size"] = 64; }, {"(sm_90)", "must be 32 on NVIDIA"}},
      {"wrong library", [](json& d) { entry(d, "gfx942")["fused_kernel_library"] = "DeepGEMM"; }, {"(gfx942)", "AITER"}},
      {"wrong schema", [](json& d) { d["schema"] = "pmqa-arch-table/2"; }, {"field \"schema\""}},
      {"no entries", [](json& d) { d["archs"] = json::array(); }, {"\"archs\""}},
      {"entry not an object", [](json& d) { d["archs"][0] = 5; }, {"entry 0", "must be a JSON object"}},
  };
  for (const auto& p : plants) {
    const std::string message = parse_error_after(p.plant);
    ASSERT_FALSE(message.empty()) << p.what << ": the planted fault was accepted";
    for (const auto& part : p.message_parts)
      EXPECT_NE(message.find(part), std::string::npos) << p.what << ": " << message;
  }
  EXPECT_THROW((void)pd::ArchTable::parse("{ not json", "broken.json"), pd::ArchTableError);
  EXPECT_TRUE(parse_error_after([](json&) {}).empty()) << "the unplanted table must parse";
}
