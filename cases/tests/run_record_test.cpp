// The run record: its JSON exactly as pmqa-run's Python writer wrote it (pinned byte for byte), a
// write / read round trip, the strict reader (what pmqa verify and pmqa-run --resume refuse), and the
// rule that a result is a plain file name inside the folder. Then the JUnit writer's pmqa-run shape.
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "../src/python_json.hpp"
#include "pmqa/cases/results.hpp"
#include "pmqa/cases/run_record.hpp"

namespace pmqa::cases {
namespace {
namespace fs = std::filesystem;

struct Tmp {
  fs::path dir = fs::temp_directory_path() / ("pmqa_run_record_test." + std::to_string(::getpid()));
  Tmp() { fs::create_directories(dir); }
  ~Tmp() { fs::remove_all(dir); }
};

TEST(PythonJson, FloatsAsPythonsReprSpellsThem) {
  // Each checked against CPython 3.11's repr().
  const std::vector<std::pair<double, std::string>> cases{
      {0.0, "0.0"},      {-0.0, "-0.0"},          {7.0, "7.0"},           {600.0, "600.0"},
      {0.001, "0.001"},  {0.0001, "0.0001"},      {1e-05, "1e-05"},       {1.5e-07, "1.5e-07"},
      {0.1 + 0.2, "0.30000000000000004"},         {123456.789, "123456.789"},
      {1e15, "1000000000000000.0"},               {1e16, "1e+16"},        {1.5e300, "1.5e+300"},
      {0.10693, "0.10693"}, {-2.5, "-2.5"}};
  for (const auto& [x, want] : cases) EXPECT_EQ(python_float_repr(x), want) << want;
  EXPECT_THROW(python_float_repr(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}

TEST(PythonJson, IndentOneAndAsciiEscapes) {
  nlohmann::ordered_json v = nlohmann::ordered_json::object();
  v["z"] = "caf\xc3\xa9 \xf0\x9f\x98\x80 \x1b\t\"\\ \x7f";  // é, U+1F600, ESC, tab, quote, backslash, DEL
  v["a"] = nlohmann::ordered_json::array({1, 2.5, true, nullptr});
  v["e"] = nlohmann::ordered_json::array();
  v["o"] = nlohmann::ordered_json::object();
  v["bad"] = std::string("x\x80y");  // not UTF-8: as Python writes the surrogateescape'd character
  // json.dumps({...}, indent=1, ensure_ascii=True) in CPython 3.11:
  EXPECT_EQ(python_json_dump(v),
            "{\n \"z\": \"caf\\u00e9 \\ud83d\\ude00 \\u001b\\t\\\"\\\\ \\u007f\",\n \"a\": [\n  1,\n  2.5,\n  true,\n  "
            "null\n ],\n \"e\": [],\n \"o\": {},\n \"bad\": \"x\\udc80y\"\n}");
}

RunRecord sample(const fs::path& folder) {
  RunRecord r;
  r.folder = folder;
  r.run_id = "20261204T000000Z-1-abcd";
  r.producer = "my_lib:op";
  r.op = "my_lib:op";
  r.convention = "eager";
  r.settings = nlohmann::ordered_json::parse(R"({"op": "my_lib:op", "iters": 3, "max_floor_ratio": 7.0,
                                                "copy_gbps": null, "case": [], "bench": true})");
  r.started = "2026-12-04T00:00:00Z";
  r.updated = "2026-12-04T00:00:01Z";
  RecordedCase ok;
  ok.file = "/cases/a.safetensors";
  ok.name = "a";
  ok.suite = "quick";
  ok.result = "a.safetensors";
  ok.status = "ok";
  ok.written = true;
  ok.sha256 = std::string(64, 'f');
  ok.seconds = 0.10693;
  ok.work = 4096;
  RecordedCase failed = ok;
  failed.name = "b";
  failed.result = "b.safetensors";
  failed.status = "failed";
  failed.message = "kernel time 1 ms is 12x the byte floor; \xc3\xa9";
  failed.written = false;
  failed.sha256 = "";
  r.cases = {ok, failed};
  r.complete = true;
  return r;
}

TEST(RunRecord, TheTextIsPythonsJsonDumps) {
  RunRecord r = sample("/out");
  r.cases.resize(1);
  r.pid = 42;
  r.host = "h";
  // What pmqa-run's Python writer (json.dumps(to_json(), indent=1, ensure_ascii=True) + "\n") wrote.
  EXPECT_EQ(run_record_json(r), R"({
 "schema": "pmqa-run-record/1",
 "run_id": "20261204T000000Z-1-abcd",
 "producer": "my_lib:op",
 "op": "my_lib:op",
 "convention": "eager",
 "started": "2026-12-04T00:00:00Z",
 "updated": "2026-12-04T00:00:01Z",
 "resumed": [],
 "complete": true,
 "stopped": "",
 "shard": "",
 "shard_of": 0,
 "pid": 42,
 "host": "h",
 "settings": {
  "op": "my_lib:op",
  "iters": 3,
  "max_floor_ratio": 7.0,
  "copy_gbps": null,
  "case": [],
  "bench": true
 },
 "cases": [
  {
   "file": "/cases/a.safetensors",
   "name": "a",
   "suite": "quick",
   "result": "a.safetensors",
   "status": "ok",
   "message": "",
   "written": true,
   "sha256": "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
   "seconds": 0.10693,
   "shape": "",
   "limit": "",
   "bench_ms": "",
   "floor_ratio": "",
   "kernel_path": "",
   "work": 4096,
   "device": ""
  }
 ]
}
)");
}

TEST(RunRecord, WriteThenReadGivesItBack) {
  Tmp t;
  EXPECT_FALSE(read_run_record(t.dir).has_value());
  EXPECT_THROW((void)load_run_record(t.dir), RunRecordError);
  const RunRecord r = sample(t.dir);
  write_run_record(r);
  const RunRecord back = load_run_record(t.dir);
  EXPECT_EQ(back.pid, ::getpid());  // the writer records itself
  EXPECT_EQ(back.run_id, r.run_id);
  EXPECT_EQ(back.settings, r.settings);
  EXPECT_EQ(back.settings.dump(), r.settings.dump());  // key order kept
  ASSERT_EQ(back.cases.size(), 2u);
  EXPECT_EQ(back.cases[1].message, r.cases[1].message);
  EXPECT_EQ(back.cases[0].seconds, r.cases[0].seconds);
  EXPECT_EQ(back.cases[0].work, 4096u);
  EXPECT_TRUE(back.cases[0].finished());
  EXPECT_EQ(back.describe(), "run 20261204T000000Z-1-abcd (producer my_lib:op)");
  EXPECT_FALSE(back.still_running);
  // Written again from what was read: the same bytes (a resumed run rewrites the record it read).
  std::ifstream in(t.dir / kRunRecordName, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(run_record_json(back), text);
}

std::string record_set(const std::string& key, const nlohmann::ordered_json& value, bool in_case = true) {
  RunRecord r = sample("/out");
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(run_record_json(r));
  auto& target = in_case ? doc["cases"][0] : doc;
  target[key] = value;
  return python_json_dump(doc);
}

// The sample's text with a key replaced by this JSON text, or left out ("").
std::string record_with(const std::string& key, const std::string& json_value, bool in_case = true) {
  if (!json_value.empty()) return record_set(key, nlohmann::ordered_json::parse(json_value), in_case);
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(run_record_json(sample("/out")));
  (in_case ? doc["cases"][0] : doc).erase(key);
  return python_json_dump(doc);
}

TEST(RunRecord, TheReaderIsStrict) {
  const fs::path where = "/out/pmqa-run.json";
  EXPECT_NO_THROW(parse_run_record(record_with("work", ""), where));  // an earlier run's record: no work
  for (const auto& [key, value, in_case] : std::vector<std::tuple<std::string, std::string, bool>>{
           {"op", "", false}, {"settings", "", false}, {"settings", "[]", false}, {"complete", "\"yes\"", false},
           {"stopped", "", false}, {"schema", "\"pmqa-run-record/2\"", false}, {"cases", "{}", false},
           {"shard_of", "-1", false}, {"file", "", true}, {"sha256", "", true}, {"written", "1", true},
           {"status", "\"done\"", true}, {"work", "-3", true}, {"seconds", "\"1\"", true}}) {
    EXPECT_THROW(parse_run_record(record_with(key, value, in_case), where), RunRecordError)
        << key << " = " << (value.empty() ? "(absent)" : value);
  }
  EXPECT_THROW(parse_run_record("[]", where), RunRecordError);
  EXPECT_THROW(parse_run_record("{\"schema\": \"pmqa-run-record/1\", NaN}", where), RunRecordError);
}

TEST(RunRecord, AResultIsAPlainNameInsideTheFolder) {
  using namespace std::string_literals;
  for (const std::string& bad : std::vector<std::string>{"../x.safetensors", "a/b.safetensors", "/etc/passwd", "..", ".",
                                                         "", "bad\x1bname.safetensors", "nul\0x"s,
                                                         "c1\xc2\x85.safetensors", "del\x7f"}) {
    EXPECT_NE(result_name_problem(bad), "") << bad;
    try {
      (void)parse_run_record(record_set("result", nlohmann::ordered_json(bad)), "/out/pmqa-run.json");
      ADD_FAILURE() << "read a record whose result is \"" << bad << "\"";
    } catch (const RunRecordError& e) {
      EXPECT_NE(std::string(e.what()).find("is not a file name in the folder"), std::string::npos) << e.what();
    }
    RunRecord r = sample("/out");
    r.cases[0].result = bad;
    EXPECT_THROW((void)run_record_json(r), RunRecordError) << bad;  // nor written
  }
  EXPECT_NE(result_name_problem("x\xff.safetensors"), "");  // not UTF-8 (JSON text cannot even hold it)
  for (const std::string good :
       std::vector<std::string>{"a.safetensors", "..a.safetensors", "caf\xc3\xa9.safetensors", "bad\\x1bname.safetensors"})
    EXPECT_EQ(result_name_problem(good), "") << good;
}

TEST(RunRecord, ARecordThatIsNotARegularFileIsRefusedUnopened) {
  Tmp t;
  fs::create_directory(t.dir / kRunRecordName);
  EXPECT_THROW((void)read_run_record(t.dir), RunRecordError);
}

TEST(RunJunit, PmqaRunStatusesAndProperties) {
  std::vector<Result> rs;
  rs.push_back(run_case_result("ok", "quick", "a", "/c/a.safetensors", "", 0.25));
  rs.push_back(run_case_result("failed", "quick", "b", "/c/b.safetensors", "speed gate\nmore", 1));
  rs.push_back(run_case_result("invalid", "", "c", "/c/c.safetensors", "", 0));
  rs.push_back(run_case_result("not-run", "quick", "d", "/c/d.safetensors", "not run: stopped", 0));
  rs.push_back(run_case_result("unsupported", "quick", "e", "/c/e.safetensors", "heads: 3 > 2", 0));
  EXPECT_THROW(run_case_result("pending", "q", "x", "f", "", 0), std::invalid_argument);
  const std::string x = junit_text("pmqa-run eager", rs, {{"run_id", "r1"}, {"complete", "false"}});
  EXPECT_NE(x.find("<testsuite name=\"pmqa-run eager\" tests=\"5\" failures=\"1\" errors=\"2\" skipped=\"1\" "
                   "time=\"1.250\">"),
            std::string::npos) << x;
  EXPECT_NE(x.find("    <properties>\n      <property name=\"run_id\" value=\"r1\" />\n      <property name=\"complete\" "
                   "value=\"false\" />\n    </properties>\n"),
            std::string::npos) << x;
  EXPECT_NE(x.find("<failure message=\"speed gate\">speed gate\nmore</failure>"), std::string::npos) << x;
  EXPECT_NE(x.find("<testcase classname=\"pmqa\" name=\"c\" time=\"0.000\" file=\"/c/c.safetensors\">\n      <error "
                   "message=\"invalid\">"),
            std::string::npos) << x;  // no suite: "pmqa"; no message: the status
  EXPECT_NE(x.find("<skipped message=\"heads: 3 &gt; 2\" />"), std::string::npos) << x;
}

}  // namespace
}  // namespace pmqa::cases
