// `qmarg bench marginal`, run as a program: the JSON it writes (every field,
// its type, one record per case), the table, progress on stderr, the layouts,
// and one-line errors with non-zero exit codes for bad options. Runs on the
// CPU with tiny states so that it stays fast; a GPU run is checked the same way
// where a GPU is usable.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "qmarg/device.hpp"
#include "cli_support.hpp"
#include "test_support.hpp"

namespace {

#if defined(QMARG_CLI_PATH)

using json = nlohmann::json;

using Result = qmarg_test::CliResult;
using qmarg_test::slurp;

std::string temp_path(const std::string& suffix) {
    return ::testing::TempDir() + "qmarg_bench_cli_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix;
}

Result qmarg_cli(const std::string& args) {
    return qmarg_test::run_qmarg_cli(QMARG_CLI_PATH, args, "qmarg_bench_cli_test");
}

void expect_number(const json& j, const char* key, const std::string& where) {
    ASSERT_TRUE(j.contains(key)) << where << " lacks " << key;
    EXPECT_TRUE(j[key].is_number()) << where << "." << key << " = " << j[key].dump();
}

void expect_string(const json& j, const char* key, const std::string& where) {
    ASSERT_TRUE(j.contains(key)) << where << " lacks " << key;
    EXPECT_TRUE(j[key].is_string() && !j[key].get<std::string>().empty()) << where << "." << key << " = " << j[key].dump();
}

// Checks the whole document against the schema that bench/plot.py and the
// results in bench/results rely on; `strategies` are the ones every case ran.
void check_schema(const json& j, const std::set<int>& ns, const std::set<int>& ks, const std::set<std::string>& precisions,
                  const std::set<std::string>& strategies, int runs) {
    for (const char* key : {"command", "qmarg_version", "git_commit", "host", "date"}) expect_string(j, key, "top");
    EXPECT_EQ(j["complete"], true);
    ASSERT_TRUE(j.contains("device") && j["device"].is_object());
    expect_string(j["device"], "kind", "device");
    expect_string(j["device"], "name", "device");
    if (j["device"]["kind"] == "GPU") {
        for (const char* key : {"driver_version", "cuda_driver_version", "cuda_runtime_version", "compute_capability"})
            expect_string(j["device"], key, "device");
        for (const char* key : {"clock_rate_khz", "memory_clock_rate_khz", "memory_bus_width_bits"}) {
            ASSERT_TRUE(j["device"].contains(key)) << key;
            EXPECT_TRUE(j["device"][key].is_null() || j["device"][key].is_number_integer()) << key;
        }
    }
    ASSERT_TRUE(j.contains("options") && j["options"].is_object());
    for (const char* key : {"n", "k", "layouts", "strategies", "precisions"}) {
        EXPECT_TRUE(j["options"][key].is_array()) << "options." << key;
    }
    EXPECT_EQ(j["options"]["runs"], runs);
    ASSERT_TRUE(j["options"]["rounds"].is_number_integer());
    const int rounds = j["options"]["rounds"];
    EXPECT_TRUE(j["options"]["seed"].is_number_unsigned());
    ASSERT_TRUE(j["skipped_n"].is_array());

    ASSERT_TRUE(j["rooflines"].is_array());
    EXPECT_EQ(j["rooflines"].size(), ns.size() * precisions.size());
    for (const json& r : j["rooflines"]) {
        for (const char* key :
             {"n", "state_bytes", "runs", "warmup", "rounds", "median_ms", "min_ms", "max_ms", "p10_ms", "p90_ms",
              "gb_per_s"})
            expect_number(r, key, "roofline " + r.dump());
        EXPECT_EQ(r["rounds"], std::min(rounds, runs)) << r.dump();
        EXPECT_GT(r["gb_per_s"].get<double>(), 0.0) << r.dump();
    }

    ASSERT_TRUE(j["records"].is_array());
    std::set<std::tuple<std::string, int, int, std::string, std::string>> seen;
    for (const json& r : j["records"]) {
        const std::string where = "record " + r.dump();
        for (const char* key : {"precision", "device", "layout", "strategy", "checked_against"}) expect_string(r, key, where);
        for (const char* key : {"n", "k", "state_seed", "state_bytes", "runs", "warmup", "rounds", "median_ms", "min_ms",
                                "max_ms", "p10_ms", "p90_ms", "gb_per_s", "roofline_gb_per_s", "roofline_ratio"})
            expect_number(r, key, where);
        EXPECT_EQ(r["rounds"], std::min(rounds, runs)) << where;
        ASSERT_TRUE(r.contains("skipped_reason")) << where;
        EXPECT_TRUE(r["skipped_reason"].is_null()) << where;
        const int n = r["n"], k = r["k"];
        EXPECT_TRUE(ns.count(n)) << where;
        EXPECT_TRUE(ks.count(k)) << where;
        EXPECT_LT(k, n) << where;
        EXPECT_EQ(r["runs"], runs) << where;
        // The qubits: k distinct, in range.
        ASSERT_TRUE(r["qubits"].is_array()) << where;
        std::set<int> qubits;
        for (const json& q : r["qubits"]) {
            EXPECT_TRUE(q.is_number_integer() && q >= 0 && q < n) << where;
            qubits.insert(q.get<int>());
        }
        EXPECT_EQ(static_cast<int>(qubits.size()), k) << where;
        // Statistics that hang together, and a positive ratio.
        const double median = r["median_ms"], lo = r["min_ms"], hi = r["max_ms"], p10 = r["p10_ms"], p90 = r["p90_ms"];
        EXPECT_GT(lo, 0.0) << where;
        EXPECT_TRUE(lo <= p10 && p10 <= median && median <= p90 && p90 <= hi) << where;
        EXPECT_GT(r["gb_per_s"].get<double>(), 0.0) << where;
        EXPECT_GT(r["roofline_ratio"].get<double>(), 0.0) << where;
        EXPECT_NEAR(r["roofline_ratio"].get<double>(), r["gb_per_s"].get<double>() / r["roofline_gb_per_s"].get<double>(),
                    1e-9)
            << where;
        EXPECT_TRUE(seen.insert({r["precision"], n, k, r["layout"], r["strategy"]}).second) << "duplicate " << where;
    }
    // A record for every case.
    for (const std::string& precision : precisions)
        for (int n : ns)
            for (int k : ks)
                for (const char* layout : {"low", "high", "scattered", "descending", "random"})
                    for (const std::string& strategy : strategies) {
                        if (k >= n) continue;
                        EXPECT_TRUE(seen.count({precision, n, k, layout, strategy}))
                            << "no record for " << precision << " n=" << n << " k=" << k << " " << layout << " " << strategy;
                    }
}

TEST(BenchCli, CpuRunWritesEveryFieldForEveryCase) {
    const std::string out = temp_path(".json");
    std::remove(out.c_str());
    const Result r = qmarg_cli("bench marginal --device cpu --n 10,12 --k 1,3 --runs 3 --min-seconds 0 --seed 11 --out " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(slurp(out));
    check_schema(j, {10, 12}, {1, 3}, {"double", "float"}, {"Auto"}, 3);
    EXPECT_EQ(j["records"].size(), 40u);
    EXPECT_EQ(j["device"]["kind"], "CPU");
    EXPECT_EQ(j["options"]["seed"], 11);
    for (const json& rec : j["records"]) EXPECT_EQ(rec["checked_against"], "serial loop") << rec.dump();

    // The table: a header and one row per case; progress counts every case.
    std::istringstream lines(r.out);
    std::string line;
    int rows = 0;
    std::getline(lines, line);
    EXPECT_EQ(line.rfind("precision", 0), 0u) << line;
    while (std::getline(lines, line)) ++rows;
    EXPECT_EQ(rows, 40);
    EXPECT_NE(r.err.find("[1/40] double n=10 k=1 low Auto"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("[40/40] float n=12 k=3 random Auto"), std::string::npos) << r.err;
}

// A case whose --runs runs take less than --min-seconds is timed again, those
// runs counted as warm-up, until its runs fill --min-seconds.
// (One round, so that the counts are those of a single timing.)
TEST(BenchCli, FastCasesGetEnoughRunsToFillMinSeconds) {
    const Result r = qmarg_cli("bench marginal --device cpu --n 10 --k 1 --layouts low --precision double --runs 3 "
                               "--warmup 2 --min-seconds 0.2 --rounds 1 -q --format json --seed 3");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["options"]["min_seconds"], 0.2);
    ASSERT_EQ(j["records"].size(), 1u);
    for (const json& timed : {j["records"][0], j["rooflines"][0]}) {
        const int runs = timed["runs"];
        // The timed runs fill 200 ms, so the slowest run times their count is
        // at least that. A 10-qubit marginal or read takes microseconds, so
        // this fails unless the case was timed again with more runs (3 runs
        // fill it alone only on a machine loaded enough to stretch each run
        // past 67 ms; then the first runs stand, and are not warm-up).
        EXPECT_GE(runs * timed["max_ms"].get<double>(), 200.0) << timed.dump();
        if (runs > 3) {
            EXPECT_GE(timed["warmup"], 2 + 3) << timed.dump();
        } else {
            EXPECT_EQ(runs, 3) << timed.dump();
            EXPECT_EQ(timed["warmup"], 2) << timed.dump();
        }
    }
}

// A state's cases are all checked before any is timed, and then timed in
// --rounds rounds: --runs split over them (a case with fewer runs than rounds
// in as many rounds as it has runs), --warmup before each share, the counts
// summed in the record.
TEST(BenchCli, CasesAreTimedInRoundsAfterAllAreChecked) {
    const Result r = qmarg_cli("bench marginal --device cpu --n 9,10 --k 1,2 --precision double "
                               "--runs 7 --warmup 1 --rounds 3 --min-seconds 0 --format json --seed 4");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    check_schema(j, {9, 10}, {1, 2}, {"double"}, {"Auto"}, 7);
    EXPECT_EQ(j["options"]["rounds"], 3);
    for (const json& timed : j["rooflines"]) {
        EXPECT_EQ(timed["runs"], 7) << timed.dump();
        EXPECT_EQ(timed["warmup"], 3) << timed.dump();
    }
    for (const json& timed : j["records"]) EXPECT_EQ(timed["warmup"], 3) << timed.dump();
    // Progress: the ten cases of n = 9 are checked, then its three rounds
    // run, then n = 10's cases come.
    const std::size_t last_check = r.err.find("[10/20] double n=9 k=2 random Auto");
    const std::size_t first_round = r.err.find("double n=9: timing round 1/3 of 10 cases");
    const std::size_t last_round = r.err.find("double n=9: timing round 3/3 of 10 cases");
    const std::size_t next_state = r.err.find("[11/20] double n=10 k=1 low Auto");
    ASSERT_NE(last_check, std::string::npos) << r.err;
    ASSERT_NE(first_round, std::string::npos) << r.err;
    ASSERT_NE(last_round, std::string::npos) << r.err;
    ASSERT_NE(next_state, std::string::npos) << r.err;
    EXPECT_LT(last_check, first_round) << r.err;
    EXPECT_LT(last_round, next_state) << r.err;

    const Result few = qmarg_cli("bench marginal --device cpu --n 9 --k 1 --precision float --runs 2 "
                                 "--warmup 1 --rounds 3 --min-seconds 0 -q --format json --seed 4");
    ASSERT_EQ(few.exit_code, 0) << few.err;
    const json f = json::parse(few.out);
    check_schema(f, {9}, {1}, {"float"}, {"Auto"}, 2);
    ASSERT_EQ(f["records"].size(), 5u);
    for (const json& timed : f["records"]) EXPECT_EQ(timed["warmup"], 2) << timed.dump();
}

// git_commit is the commit the tool was built from (the build rewrites it),
// "-modified" when tracked files differed from it, or "unknown" outside a
// git checkout. Compared with HEAD where the tool under test is the one built
// from this checkout and git can read it.
TEST(BenchCli, RecordsTheCommitItWasBuiltFrom) {
    const Result r = qmarg_cli("bench marginal --device cpu --n 8 --k 1 --layouts low --precision float --runs 1 "
                               "--min-seconds 0 -q --format json --seed 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string commit = json::parse(r.out)["git_commit"];
    ASSERT_TRUE(commit == "unknown" || std::regex_match(commit, std::regex("[0-9a-f]{7,40}(-modified)?"))) << commit;
    const char* cli = std::getenv("QMARG_CLI_PATH");
    if (cli != nullptr && *cli != '\0') GTEST_SKIP() << "a tool from elsewhere: " << cli;
    const std::string head_file = ::testing::TempDir() + "qmarg_bench_cli_test_head";
    const std::string git = "git -C '" + std::string(QMARG_SOURCE_DIR) + "' rev-parse --short HEAD > " + head_file +
                            " 2> /dev/null";
    if (std::system(git.c_str()) != 0) GTEST_SKIP() << "no git checkout at " << QMARG_SOURCE_DIR;
    std::string head = slurp(head_file);
    head.erase(head.find_last_not_of("\n") + 1);
    EXPECT_EQ(commit.substr(0, commit.find('-')), head) << "the tool was built from another commit than HEAD";
}

TEST(BenchCli, LayoutsAreTheDocumentedQubitsAndRandomFollowsTheSeed) {
    const auto qubits_by_layout = [](const std::string& seed) {
        const Result r = qmarg_cli("bench marginal --device cpu --n 9 --k 4 --runs 1 --warmup 0 --precision float -q "
                                   "--format json --seed " + seed);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.err, "");
        std::map<std::string, std::vector<int>> out;
        const json j = json::parse(r.out);
        for (const json& rec : j["records"]) out[rec["layout"].get<std::string>()] = rec["qubits"].get<std::vector<int>>();
        return out;
    };
    const auto a = qubits_by_layout("5");
    EXPECT_EQ(a.at("low"), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(a.at("high"), (std::vector<int>{5, 6, 7, 8}));
    EXPECT_EQ(a.at("scattered"), (std::vector<int>{0, 2, 5, 8}));
    EXPECT_EQ(a.at("descending"), (std::vector<int>{8, 7, 6, 5}));
    EXPECT_EQ(qubits_by_layout("5").at("random"), a.at("random"));
}

TEST(BenchCli, BadOptionsAreOneLineErrors) {
    const struct {
        const char* args;
        int exit_code;
        const char* says;
    } cases[] = {
        {"--device cpu --strategies BinStationary", 1, "BinStationary is a GPU strategy"},
        {"--device cpu --strategies Fastest", 1, "unknown strategy 'Fastest'"},
        {"--device cpu --n 4 --k 4,5", 1, "no case to run"},
        {"--device cpu --n 70", 1, "--n: 70 is not a qubit count in 1..58"},
        {"--device cpu --n 8 --k 0", 1, "--k: 0"},
        {"--device cpu --n 50", 1, "--n 50"},
        {"--device cpu --layouts diagonal", 2, "diagonal"},
        {"--device cpu --runs 0", 2, "--runs"},
        {"--device cpu --rounds 0", 2, "--rounds"},
        {"--device cpu --min-seconds -1", 2, "--min-seconds"},
        {"--device cpu --precision half", 2, "half"},
        {"--device tpu", 2, "tpu"},
        {"--device cpu --format xml", 2, "xml"},
        {"--device cpu --n 8 --k 1 --out /nonexistent-dir/x.json", 1, "--out: could not write /nonexistent-dir/x.json"},
    };
    for (const auto& c : cases) {
        const Result r = qmarg_cli(std::string("bench marginal ") + c.args);
        EXPECT_EQ(r.exit_code, c.exit_code) << c.args << ": " << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << ": " << r.err;
        EXPECT_EQ(r.out, "") << c.args;
    }
    const Result missing = qmarg_cli("bench");
    EXPECT_EQ(missing.exit_code, 2) << missing.err;
    if (!qmarg::gpu_available()) {
        const Result gpu = qmarg_cli("bench marginal --device gpu --n 8 --k 1");
        EXPECT_EQ(gpu.exit_code, 1);
        EXPECT_NE(gpu.err.find("no usable GPU"), std::string::npos) << gpu.err;
    }
}

TEST(BenchCli, GpuRunChecksAndTimesEveryStrategy) {
    QMARG_SKIP_IF_UNAVAILABLE(qmarg::Device::Gpu);
    const std::string out = temp_path(".json");
    // n = 25 is above the CPU-reference limit, so cases there are checked
    // against another strategy.
    const Result r = qmarg_cli("bench marginal --device gpu --n 12,25 --k 1,3 --runs 3 --min-seconds 0 --precision double -q --out " +
                               out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(slurp(out));
    check_schema(j, {12, 25}, {1, 3}, {"double"},
                 {"GlobalAtomic", "SharedPrivatized", "Partitioned", "BinStationary", "Auto"}, 3);
    for (const json& rec : j["records"]) {
        const std::string against = rec["checked_against"];
        if (rec["n"] == 12) EXPECT_EQ(against, "CPU") << rec.dump();
        if (rec["n"] == 25) EXPECT_NE(against, rec["strategy"].get<std::string>()) << rec.dump();
    }
}

#endif  // QMARG_CLI_PATH

}  // namespace
