// Profiles: round trip, golden file (regenerate with NCCLTUNE_UPDATE_GOLDEN=1 and review the diff),
// hostile documents, the store layout and size ranges.
#include "profile/profile.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "golden.h"
#include "profile/size_ranges.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

constexpr std::uint64_t GiB = std::uint64_t{1} << 30;

Profile sample_profile() {
  Profile p;
  p.shape.node_type_key = "h100-sxm-80g.8gpu.nvswitch.8xib400.nccl2.28";
  p.shape.nodes = 2;
  p.shape.gpus_per_node = 8;
  p.shape.ranks = 16;
  p.shape.gpu = "NVIDIA H100 80GB HBM3";
  p.shape.nvswitch = true;
  p.shape.nics_per_node = 8;
  p.shape.nic = "mlx5 InfiniBand 400 Gb/s";
  p.shape.gpu_nic_affinity = "PIX";
  p.shape.nccl_version = "2.28.9";
  p.shape.cuda_driver = "580.159.03";
  p.env = {{"NCCL_NVLS_ENABLE", "1"}, {"NCCL_MIN_NCHANNELS", "16"}, {"NCCL_ALGO", "NVLS,Tree"}};
  p.collectives["all_reduce"].results.sizes = {8, 1024, 65536, 1048576, 1073741824};
  p.collectives["all_reduce"].results.baseline = {0.01, 1.2, 30.25, 95.1, 370.2};
  p.collectives["all_reduce"].results.tuned = {0.01, 1.3, 31, 120.4, 471.9};
  p.collectives["all_reduce"].results.speedup_geomean = 1.18;
  p.collectives["all_reduce"].results.worst_size_ratio = 0.99;
  p.collectives["all_reduce"].results.peak_busbw_gbps = 400;
  p.collectives["all_reduce"].results.peak_bottleneck = "network, 1x mlx5 400 Gb/s per GPU x 8 GPUs";
  std::vector<SizeChoice> best(5);
  best[0].algo = best[1].algo = best[2].algo = "Tree";
  best[0].proto = best[1].proto = best[2].proto = "LL";
  best[3].algo = best[4].algo = "NVLS";
  best[3].proto = best[4].proto = "Simple";
  p.collectives["all_reduce"].per_size = size_ranges(p.collectives["all_reduce"].results.sizes, best);
  p.collectives["all_reduce"].measured = {p.collectives["all_reduce"].results.sizes.front(),
                                          p.collectives["all_reduce"].results.sizes.back()};
  p.notes = {
      "NCCL_PROTO=LL,Simple is not in env (it would apply to every size): it removes LL128, which "
      "NCCL's defaults use at the largest measured size (1G); its per-size choices stay in per_size"};
  p.provenance.tool = "nccltune 0.3.0";
  p.provenance.date = "2026-11-29T12:00:00Z";
  p.provenance.trials = 57;
  p.provenance.failed_trials = 3;
  p.provenance.duration_s = 1312.5;
  p.provenance.objective = "balanced";
  p.provenance.hosts = 2;
  p.provenance.noise_floor = 0.012;
  p.provenance.confirmation = "A/B 4 rounds: +17.9% (noise 1.2%)";
  p.failed.push_back({{{"NCCL_ALGO", "Tree"}, {"NCCL_PROTO", "LL128"}},
                      TrialOutcome::wrong_data,
                      "rank 3: 1024 wrong elements"});
  p.failed.push_back({{{"NCCL_ALGO", "NVLS"}, {"NCCL_NVLS_ENABLE", "0"}},
                      TrialOutcome::init_error,
                      "ncclCommInitRank: \"invalid usage\" \\ NVLS"});
  return p;
}

// The error parse_profile gives for `text`, which must be one line naming hostile.yaml.
std::string rejection(const std::string& text) {
  Result<Profile> profile = parse_profile(text, "hostile.yaml");
  EXPECT_FALSE(profile.ok()) << "accepted:\n" << text.substr(0, 400);
  if (profile.ok()) return {};
  EXPECT_EQ(profile.error().find('\n'), std::string::npos) << profile.error();
  EXPECT_EQ(profile.error().rfind("hostile.yaml", 0), 0u) << profile.error();
  EXPECT_LT(profile.error().size(), 400u) << profile.error();
  return profile.error();
}

const std::string kHead = "schema: nccltune/profile/v1\nshape: {key: k, nodes: 1}\n";

// A profile whose env holds NCCL_ALGO: <value_yaml>, on line 4.
std::string with_env_value(const std::string& value_yaml) {
  return kHead + "env:\n  NCCL_ALGO: " + value_yaml + "\n";
}

}  // namespace

TEST(Profile, RoundTrip) {
  const Profile profile = sample_profile();
  const std::string yaml = profile_to_yaml(profile);
  Result<Profile> parsed = parse_profile(yaml, "sample.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error() << "\n" << yaml;
  EXPECT_EQ(*parsed, profile);
  EXPECT_EQ(profile_to_yaml(*parsed), yaml);  // deterministic

  Profile odd_numbers = profile;
  odd_numbers.collectives["all_reduce"].results.baseline = {1e-300, 0.1 + 0.2, 1.0 / 3, 123456789.125, 5e20};
  odd_numbers.collectives["all_reduce"].results.speedup_geomean = 2.0 / 3;
  Result<Profile> exact = parse_profile(profile_to_yaml(odd_numbers), "numbers.yaml");
  ASSERT_TRUE(exact.ok()) << exact.error();
  EXPECT_EQ(exact->collectives["all_reduce"].results.baseline,
            odd_numbers.collectives["all_reduce"].results.baseline);  // bit for bit
  EXPECT_EQ(exact->collectives["all_reduce"].results.speedup_geomean,
            odd_numbers.collectives["all_reduce"].results.speedup_geomean);
}

TEST(Profile, PairsAreWrittenWhenMeasuredAndReadBack) {
  // provenance.pairs: the pairs a pair-mode tune measured in a communicator, apart from its trials.
  Profile p = sample_profile();
  EXPECT_EQ(profile_to_yaml(p).find("  pairs:"), std::string::npos) << "none measured: not written";
  p.provenance.pairs = 27;
  const std::string text = profile_to_yaml(p);
  EXPECT_NE(text.find("  trials: 57\n  pairs: 27\n  failed_trials: 3\n"), std::string::npos) << text;
  const Result<Profile> back = parse_profile(text, "pairs.yaml");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->provenance.pairs, 27);
  EXPECT_FALSE(
      parse_profile(
          "schema: nccltune/profile/v2\nshape: {key: k, nodes: 2}\nenv: {}\nprovenance: {pairs: -1}\n", "x")
          .ok());
}

TEST(Profile, PeakIsOptionalAndSaysWhyWhenUnknown) {
  Profile profile = sample_profile();
  EXPECT_DOUBLE_EQ(percent_of_peak(profile.collectives["all_reduce"].results, 4).value_or(0),
                   100 * 471.9 / 400);
  EXPECT_FALSE(percent_of_peak(profile.collectives["all_reduce"].results, 5)) << "no such size";
  profile.collectives["all_reduce"].results.peak_busbw_gbps.reset();
  profile.collectives["all_reduce"].results.peak_bottleneck = "unknown: GPU0's NVLink count is not known";
  const std::string yaml = profile_to_yaml(profile);
  EXPECT_EQ(yaml.find("peak_busbw_gbps"), std::string::npos);
  Result<Profile> parsed = parse_profile(yaml, "unknown-peak.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(*parsed, profile);
  EXPECT_FALSE(percent_of_peak(parsed->collectives.at("all_reduce").results, 4));

  std::string negative = profile_to_yaml(sample_profile());
  negative.replace(negative.find("peak_busbw_gbps: 400"), 20, "peak_busbw_gbps: -4");
  Result<Profile> refused = parse_profile(negative, "negative.yaml");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("results.peak_busbw_gbps"), std::string::npos) << refused.error();
}

TEST(Profile, GoldenYaml) {
  const std::string yaml = profile_to_yaml(sample_profile());
  test_support::expect_matches_file(fixture("profiles/h100-2n.yaml"), yaml);
  // The golden file itself is a valid profile.
  Result<Profile> golden = read_profile(fixture("profiles/h100-2n.yaml"));
  ASSERT_TRUE(golden.ok()) << golden.error();
  EXPECT_EQ(*golden, sample_profile());
}

TEST(Profile, KeepDefaults) {
  Profile profile = sample_profile();
  profile.env.clear();
  profile.keep_defaults = true;
  const std::string yaml = profile_to_yaml(profile);
  EXPECT_NE(yaml.find("keep_defaults: true\nenv: {}\n"), std::string::npos) << yaml;
  Result<Profile> parsed = parse_profile(yaml, "defaults.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_TRUE(parsed->keep_defaults);
  EXPECT_TRUE(parsed->env.empty());

  Profile empty;  // every section written, even empty ones
  empty.shape.node_type_key = "x";
  const std::string minimal = profile_to_yaml(empty);
  EXPECT_NE(minimal.find("collectives: {}\n"), std::string::npos) << minimal;
  EXPECT_NE(minimal.find("failed: []\n"), std::string::npos) << minimal;
  Result<Profile> back = parse_profile(minimal, "empty.yaml");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(*back, empty);
  empty.collectives["all_gather"];  // a collective without results still writes each part
  const std::string one = profile_to_yaml(empty);
  EXPECT_NE(one.find("  all_gather:\n    per_size: []\n    results:\n      sizes: []\n"), std::string::npos)
      << one;
  EXPECT_EQ(*parse_profile(one, "one.yaml"), empty);
}

TEST(Profile, DesignExampleParses) {
  Result<Profile> profile = read_profile(fixture("profiles/design-example.yaml"));
  ASSERT_TRUE(profile.ok()) << profile.error();
  EXPECT_EQ(profile->shape.node_type_key, "h100-sxm-80g.8gpu.nvswitch.8xib400.nccl2.28");
  EXPECT_EQ(profile->shape.ranks, 16);
  EXPECT_EQ(profile->env.at("NCCL_MIN_NCHANNELS"), "16");
  ASSERT_EQ(profile->collectives.at("all_reduce").per_size.size(), 2u);
  EXPECT_EQ(profile->collectives.at("all_reduce").per_size[1].max_bytes, 17179869184u);
  EXPECT_EQ(profile->collectives.at("all_reduce").results.tuned.back(), 471.9);
  EXPECT_EQ(profile->provenance.duration_s, 1312);
  EXPECT_FALSE(profile->keep_defaults);
}

TEST(Profile, MinimalHandWrittenProfile) {
  Result<Profile> profile =
      parse_profile(kHead + "env: {NCCL_PROTO: Simple, NCCL_MIN_NCHANNELS: 16}\n", "min.yaml");
  ASSERT_TRUE(profile.ok()) << profile.error();
  EXPECT_EQ(profile->env.at("NCCL_MIN_NCHANNELS"), "16");  // plain numbers are strings in env
  EXPECT_EQ(profile->shape.gpus_per_node, 1);
  EXPECT_TRUE(profile->collectives.at("all_reduce").per_size.empty());
}

// The count left out follows from the others, so what the writer writes parses back (fuzz_profile
// found `nodes: 81` alone written back as ranks 1, which the reader then refused).
TEST(Profile, LeftOutRankCountsFollowFromTheOthers) {
  const auto shape_of = [](const std::string& fields) {
    Result<Profile> profile =
        parse_profile("schema: nccltune/profile/v1\nenv: {}\nshape: {" + fields + "}\n", "s.yaml");
    EXPECT_TRUE(profile.ok()) << profile.error();
    EXPECT_TRUE(parse_profile(profile_to_yaml(*profile), "written.yaml").ok());
    return std::pair{profile->shape.gpus_per_node, profile->shape.ranks};
  };
  EXPECT_EQ(shape_of("key: k, nodes: 81"), std::pair(1, 81));
  EXPECT_EQ(shape_of("key: k, nodes: 2, gpus_per_node: 8"), std::pair(8, 16));
  EXPECT_EQ(shape_of("key: k, nodes: 2, ranks: 16"), std::pair(8, 16));
}

// A curve left out is written as [] and read back as left out (fuzz_profile: `tuned` missing beside
// `sizes` and `baseline` was written as `tuned: []`, which the reader then refused).
TEST(Profile, LeftOutCurveIsWrittenAndReadBack) {
  Result<Profile> profile = parse_profile(
      kHead + "keep_defaults: true\nenv: {}\nresults: {sizes: [8, 1024], baseline: [0.1, 2.5]}\n",
      "kept.yaml");
  ASSERT_TRUE(profile.ok()) << profile.error();
  EXPECT_TRUE(profile->collectives.at("all_reduce").results.tuned.empty());
  Result<Profile> again = parse_profile(profile_to_yaml(*profile), "written.yaml");
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(*again, *profile);
  EXPECT_FALSE(
      parse_profile(kHead + "env: {}\nresults: {sizes: [8, 1024], tuned: [0.1]}\n", "short.yaml").ok());
}

TEST(Profile, WithPluginResultsAreWrittenAndReadBack) {
  Profile profile = sample_profile();
  ProfileResults& results = profile.collectives["all_reduce"].results;
  results.with_plugin = results.tuned;
  results.with_plugin.back() *= 1.25;
  results.with_plugin_speedup_geomean = 1.0625;
  profile.provenance.plugin_confirmation = "A/B 3 rounds in fresh workers: +6.2%";
  Result<Profile> parsed = parse_profile(profile_to_yaml(profile), "plugin.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(*parsed, profile);
  // A curve of another length than the sizes is refused, naming the field.
  Result<Profile> short_curve =
      parse_profile(kHead + "env: {}\nresults: {sizes: [8, 1024], with_plugin: [0.1]}\n", "short.yaml");
  ASSERT_FALSE(short_curve.ok());
  EXPECT_NE(short_curve.error().find("with_plugin"), std::string::npos) << short_curve.error();
}

// The plugin's verdict per collective (tune_profile/plugin_confirmation.h): written only when
// there is one, read back, and an unknown status refused naming its field.
TEST(Profile, PluginVerdictIsWrittenReadBackAndChecked) {
  Profile profile = sample_profile();
  EXPECT_EQ(profile_to_yaml(profile).find("plugin:"), std::string::npos);
  profile.collectives["all_reduce"].plugin = {PluginStatus::not_served,
                                              "not using /p/2n.yaml: tuned for 8 GPUs per node: \"quoted\""};
  const std::string text = profile_to_yaml(profile);
  EXPECT_NE(text.find("plugin: {status: not_served, why: "), std::string::npos) << text;
  Result<Profile> parsed = parse_profile(text, "verdict.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(*parsed, profile);
  std::string unknown = text;
  unknown.replace(unknown.find("not_served"), 10, "delivered");
  Result<Profile> refused = parse_profile(unknown, "verdict.yaml");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("collectives.all_reduce.plugin.status"), std::string::npos)
      << refused.error();
  EXPECT_NE(refused.error().find("delivered"), std::string::npos) << refused.error();
}

TEST(Profile, ChunkBytesIsWrittenOnlyWhenMeasuredAndReadBack) {
  Profile profile = sample_profile();
  std::vector<SizeChoice>& per_size = profile.collectives["all_reduce"].per_size;
  ASSERT_FALSE(per_size.empty());
  EXPECT_EQ(profile_to_yaml(profile).find("chunk_bytes"), std::string::npos);  // 0: not written
  per_size.front().chunk_bytes = 262144;
  const std::string yaml = profile_to_yaml(profile);
  EXPECT_NE(yaml.find("chunk_bytes: 262144"), std::string::npos);
  Result<Profile> parsed = parse_profile(yaml, "chunk.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(*parsed, profile);
}

TEST(Profile, HostileEnvValuesAreRejected) {
  const std::string field = "hostile.yaml:4: env.NCCL_ALGO: ";
  for (const std::string& value :
       {std::string("\"$(touch /tmp/nccltune-canary)\""), std::string("\"`touch /tmp/nccltune-canary`\""),
        std::string("\"Ring; touch /tmp/nccltune-canary\""), std::string("Ring;reboot"),
        std::string("\"Ring'\""), std::string("'Ring\"'"),
        std::string("\"Ring\\nexport LD_PRELOAD=/tmp/x.so\""), std::string("\"Ring\\0\""),
        std::string("\"Ring\\e[31m\""), std::string("\"R\\xffing\""), std::string("\"Ring Tree\""),
        std::string("\"\""), std::string("\"a|b\""), std::string("\"${HOME}\"")}) {
    const std::string error = rejection(with_env_value(value));
    EXPECT_EQ(error.rfind(field, 0), 0u) << value << " -> " << error;
  }
  EXPECT_EQ(rejection(with_env_value("\"$(id)\"")),
            field + "'$(id)' has characters outside [A-Za-z0-9_,.:^=+-] or is longer than 1024");
  EXPECT_EQ(rejection(with_env_value("\"a\\nb\"")),
            field + "'a\\x0ab' has characters outside [A-Za-z0-9_,.:^=+-] or is longer than 1024");
  EXPECT_EQ(rejection(with_env_value("")), field + "must be a string");  // null
  EXPECT_EQ(rejection(with_env_value("{a: b}")), field + "must be a string");
  EXPECT_EQ(rejection(with_env_value("[Ring]")), field + "must be a string");

  const std::string megabyte = rejection(with_env_value(std::string(1000000, 'a')));
  EXPECT_EQ(megabyte.rfind(field, 0), 0u) << megabyte;
  EXPECT_NE(megabyte.find("(1000000 bytes)"), std::string::npos) << megabyte;
}

// What ships must be what NCCL reads: a value NCCL ignores or reads otherwise is refused, naming
// the file, line and field (knob_value_problem); a failed trial's env keeps what was tried.
TEST(Profile, ShippedValuesNcclWouldMisreadAreRejected) {
  EXPECT_NE(rejection(kHead + "env:\n  NCCL_NET_GDR_LEVEL: sys\n")
                .rfind("hostile.yaml:4: env.NCCL_NET_GDR_LEVEL: 'sys'", 0),
            std::string::npos);
  EXPECT_NE(rejection(kHead + "env:\n  NCCL_BUFFSIZE: \"0x400000\"\n")
                .rfind("hostile.yaml:4: env.NCCL_BUFFSIZE: ", 0),
            std::string::npos);
  EXPECT_TRUE(
      parse_profile(kHead + "env:\n  NCCL_NET_GDR_LEVEL: SYS\n  NCCL_MIN_NCHANNELS: \"32\"\n", "ok.yaml")
          .ok())
      << "an old profile's deprecated channel names still read";
}

TEST(Profile, HostileEnvNamesAreRejected) {
  EXPECT_EQ(rejection(kHead + "env:\n  LD_PRELOAD: /tmp/x.so\n"),
            "hostile.yaml:4: env: name 'LD_PRELOAD' does not match ^NCCL_[A-Z0-9_]+$");
  EXPECT_EQ(rejection(kHead + "env: {\"NCCL_X; touch /tmp/canary\": \"1\"}\n"),
            "hostile.yaml:3: env: name 'NCCL_X; touch /tmp/canary' does not match ^NCCL_[A-Z0-9_]+$");
  EXPECT_EQ(rejection(kHead + "env: {nccl_algo: Ring}\n"),
            "hostile.yaml:3: env: name 'nccl_algo' does not match ^NCCL_[A-Z0-9_]+$");
  EXPECT_EQ(rejection(kHead + "env: {\"NCCL_ALGO\\n\": Ring}\n"),
            "hostile.yaml:3: env: name 'NCCL_ALGO\\x0a' does not match ^NCCL_[A-Z0-9_]+$");
  EXPECT_EQ(rejection(kHead + "env: {NCCL_ALGO: Ring, NCCL_ALGO: Tree}\n"),
            "hostile.yaml:3: env.NCCL_ALGO: appears twice");
  EXPECT_EQ(rejection(kHead + "env: {[NCCL_ALGO]: Ring}\n"), "hostile.yaml:3: env: names must be strings");
  EXPECT_EQ(rejection(kHead + "env: NCCL_ALGO=Ring\n"), "hostile.yaml:3: env: must be a map");
  EXPECT_EQ(rejection(kHead + "env: {}\nfailed:\n  - {env: {LD_PRELOAD: x}}\n"),
            "hostile.yaml:5: failed[0].env: name 'LD_PRELOAD' does not match ^NCCL_[A-Z0-9_]+$");
}

TEST(Profile, HostileDocumentsAreRejected) {
  std::string with_nul = with_env_value("Ring");
  with_nul.insert(with_nul.size() - 1, std::string(1, '\0'));
  EXPECT_EQ(rejection(with_nul), "hostile.yaml:4: contains a NUL byte");
  EXPECT_EQ(rejection(with_env_value("R\xff\xfeing")), "hostile.yaml:4: not valid UTF-8");
  EXPECT_EQ(rejection(with_env_value("\xc0\xaf")), "hostile.yaml:4: not valid UTF-8");  // overlong '/'
  EXPECT_EQ(rejection(kHead + "env: {}\n# " + std::string(kMaxProfileBytes, '#') + "\n"),
            "hostile.yaml:1: " + std::to_string(kHead.size() + 10 + kMaxProfileBytes + 1) +
                " bytes, more than the 1 MiB allowed");

  // A billion laughs: nine times nine times ... references to one small list.
  std::string bomb = kHead + "env: {}\nfailed:\n  - reason: &a0 [x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level < 10; ++level) {
    bomb += "  - reason: &a" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) bomb += (i ? ", *a" : "*a") + std::to_string(level - 1);
    bomb += "]\n";
  }
  EXPECT_EQ(rejection(bomb), "hostile.yaml:5: anchors (&name) are not allowed");
  EXPECT_EQ(rejection(kHead + "env: &e {NCCL_ALGO: Ring}\nfailed:\n  - {env: *e}\n"),
            "hostile.yaml:3: anchors (&name) are not allowed");
  const std::string undefined_alias = rejection(kHead + "env: *nothing\n");
  EXPECT_NE(undefined_alias.find("hostile.yaml:3:"), std::string::npos) << undefined_alias;

  EXPECT_EQ(rejection(kHead + "env: {}\n---\n" + kHead + "env: {NCCL_ALGO: Ring}\n"),
            "hostile.yaml:1: more than one YAML document");
  EXPECT_EQ(rejection(kHead + "env: !!binary aGVsbG8=\n"),
            "hostile.yaml:3: explicit tags (tag:yaml.org,2002:binary) are not allowed; text that starts with "
            "! goes in quotes");
  EXPECT_EQ(rejection(std::string(3000, '[')), "hostile.yaml:1: invalid YAML: nested too deeply");
  EXPECT_NE(rejection(kHead + "env: {NCCL_ALGO: Ring\n").find("invalid YAML"), std::string::npos);
  EXPECT_EQ(rejection(""), "hostile.yaml:1: the document must be a map (schema, shape, env, ...)");
}

TEST(Profile, V2HoldsEachCollectiveAndV1ReadsAsAllReduce) {
  Profile p = sample_profile();
  CollectiveProfile gather = p.collectives.at(kAllReduce);
  gather.per_size = {{0, 1048576, "Ring", "LL128", 0}};
  p.collectives["all_gather"] = gather;
  CollectiveProfile guard;
  guard.guard = true;
  guard.results.sizes = {8, 1024};
  guard.results.baseline = {0.5, 2};
  guard.results.tuned = {0.5, 1.9};
  p.collectives["alltoall"] = guard;
  const std::string yaml = profile_to_yaml(p);
  EXPECT_EQ(yaml.rfind("schema: nccltune/profile/v2\n", 0), 0u) << yaml;
  EXPECT_NE(yaml.find("  alltoall:\n    guard: true\n"), std::string::npos) << yaml;
  Result<Profile> back = parse_profile(yaml, "v2.yaml");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(*back, p);
  ASSERT_NE(back->collective("all_gather"), nullptr);
  EXPECT_EQ(back->collective("all_gather")->per_size.front().proto, "LL128");
  EXPECT_EQ(back->collective("reduce_scatter"), nullptr);

  // A v1 file's top-level parts are its all_reduce; nothing else is measured.
  Result<Profile> v1 =
      parse_profile(kHead +
                        "env: {}\nmeasured: {min_bytes: 8, max_bytes: 1024}\n"
                        "per_size:\n  - {min_bytes: 0, max_bytes: 1024, algo: Ring, proto: LL}\n"
                        "results: {sizes: [8, 1024], baseline: [1, 2], tuned: [1, 3]}\n",
                    "v1.yaml");
  ASSERT_TRUE(v1.ok()) << v1.error();
  ASSERT_EQ(v1->collectives.size(), 1u);
  const CollectiveProfile& all_reduce = v1->collectives.at(kAllReduce);
  EXPECT_EQ(all_reduce.measured, (MeasuredRange{8, 1024}));
  EXPECT_EQ(all_reduce.per_size.size(), 1u);
  EXPECT_EQ(all_reduce.results.tuned, (std::vector<double>{1, 3}));
}

TEST(Profile, V2ErrorsNameTheCollective) {
  const std::string head = "schema: nccltune/profile/v2\nshape: {key: k, nodes: 1}\nenv: {}\n";
  EXPECT_EQ(rejection(head + "per_size: []\n"), "hostile.yaml:4: unknown key 'per_size'");
  EXPECT_EQ(
      rejection(head + "collectives:\n  all_to_all: {}\n"),
      "hostile.yaml:5: collectives: unknown collective 'all_to_all' (all_reduce, all_gather, reduce_scatter, "
      "alltoall, broadcast, reduce)");
  EXPECT_EQ(rejection(head + "collectives:\n  all_gather: {results: {sizes: [16, 8]}}\n"),
            "hostile.yaml:5: collectives.all_gather.results.sizes[1]: sizes must be ascending");
  EXPECT_EQ(
      rejection(head +
                "collectives:\n  reduce_scatter:\n    per_size:\n      - {min_bytes: 10, max_bytes: 5}\n"),
      "hostile.yaml:7: collectives.reduce_scatter.per_size[0].max_bytes: below min_bytes");
  EXPECT_EQ(rejection(head + "collectives:\n  all_reduce: {guard: maybe}\n"),
            "hostile.yaml:5: collectives.all_reduce.guard: must be true or false");
  EXPECT_EQ(rejection(head + "collectives:\n  all_reduce: {tuned: true}\n"),
            "hostile.yaml:5: collectives.all_reduce: unknown key 'tuned'");
}

TEST(Profile, StrictSchema) {
  EXPECT_EQ(rejection(kHead + "env: {}\nexec: reboot\n"), "hostile.yaml:4: unknown key 'exec'");
  EXPECT_EQ(rejection("schema: nccltune/profile/v4\nshape: {key: k, nodes: 1}\nenv: {}\n"),
            "hostile.yaml:1: schema: expected 'nccltune/profile/v3', 'nccltune/profile/v2' or "
            "'nccltune/profile/v1', found 'nccltune/profile/v4'");
  EXPECT_EQ(rejection("shape: {key: k, nodes: 1}\nenv: {}\n"),
            "hostile.yaml:1: schema: missing (nccltune/profile/v2)");
  EXPECT_EQ(rejection(kHead), "hostile.yaml:1: env: missing ({} when NCCL's defaults are kept)");
  EXPECT_EQ(rejection("schema: nccltune/profile/v1\nenv: {}\n"), "hostile.yaml:1: shape: missing");

  const auto shape = [](const std::string& fields) {
    return rejection("schema: nccltune/profile/v1\nenv: {}\nshape: {" + fields + "}\n");
  };
  EXPECT_EQ(shape("key: k, nodes: two"), "hostile.yaml:3: shape.nodes: must be a whole number");
  EXPECT_EQ(shape("key: k, nodes: \"2\""), "hostile.yaml:3: shape.nodes: must be a whole number");
  EXPECT_EQ(shape("key: k, nodes: 2.5"), "hostile.yaml:3: shape.nodes: must be a whole number");
  EXPECT_EQ(shape("key: k, nodes: 0"), "hostile.yaml:3: shape.nodes: 0 is outside 1..2147483647");
  EXPECT_EQ(shape("key: k, nodes: 99999999999"),
            "hostile.yaml:3: shape.nodes: 99999999999 is outside 1..2147483647");
  EXPECT_EQ(shape("key: k, nodes: 2, gpus_per_node: 8, ranks: 8"),
            "hostile.yaml:3: shape.ranks: 8 is not nodes x gpus_per_node (2 x 8)");
  EXPECT_TRUE(
      parse_profile(
          "schema: nccltune/profile/v1\nenv: {}\nshape: {key: k, nodes: 2, gpus_per_node: 8, ranks: 16}\n",
          "ok.yaml")
          .ok());
  EXPECT_EQ(shape("key: k, nodes: 2, ranks: 15"),
            "hostile.yaml:3: shape.ranks: 15 is not a multiple of nodes (2)");
  EXPECT_EQ(shape("key: k, nodes: 65536, gpus_per_node: 65536"),
            "hostile.yaml:3: shape: nodes x gpus_per_node is more than 2147483647");
  EXPECT_EQ(shape("key: k, nodes: 1, nvswitch: yes"),
            "hostile.yaml:3: shape.nvswitch: must be true or false");
  EXPECT_EQ(shape("key: k, nodes: 1, nvswitch: \"true\""),
            "hostile.yaml:3: shape.nvswitch: must be true or false");
  EXPECT_EQ(shape("key: k, nodes: 1, gpu: [a]"), "hostile.yaml:3: shape.gpu: must be a string");
  EXPECT_EQ(shape("key: k, nodes: 1, gpu: \"H100\\e]0;pwned\\a\""),
            "hostile.yaml:3: shape.gpu: 'H100\\x1b]0;pwned\\x07' has control characters or invalid UTF-8");
  EXPECT_EQ(shape("key: k, nodes: 1, gpu: \"\\u0085\""),
            "hostile.yaml:3: shape.gpu: '\\xc2\\x85' has control characters or invalid UTF-8");
  EXPECT_EQ(shape("key: k, nodes: 1, colour: red"), "hostile.yaml:3: shape: unknown key 'colour'");
  EXPECT_EQ(shape("nodes: 1"), "hostile.yaml:3: shape.key: missing");
  EXPECT_EQ(shape("key: ../../etc, nodes: 1"),
            "hostile.yaml:3: shape.key: '../../etc' is not a name from [A-Za-z0-9._-]");
  EXPECT_EQ(shape("key: .., nodes: 1"), "hostile.yaml:3: shape.key: '..' is not a name from [A-Za-z0-9._-]");
  EXPECT_EQ(shape("key: \"\", nodes: 1"), "hostile.yaml:3: shape.key: '' is not a name from [A-Za-z0-9._-]");
  EXPECT_NE(shape("key: k, nodes: 1, gpu: \"" + std::string(5000, 'x') + "\"").find("shape.gpu: 5000 bytes"),
            std::string::npos);

  EXPECT_EQ(rejection(kHead + "keep_defaults: true\nenv: {NCCL_ALGO: Ring}\n"),
            "hostile.yaml:4: env: must be empty when keep_defaults is true");
  EXPECT_EQ(rejection(kHead + "env: {}\nresults: {sizes: [8, 16], baseline: [1]}\n"),
            "hostile.yaml:4: results.baseline: 1 values for 2 sizes");
  EXPECT_EQ(rejection(kHead + "env: {}\nresults: {sizes: [16, 8]}\n"),
            "hostile.yaml:4: results.sizes[1]: sizes must be ascending");
  EXPECT_EQ(rejection(kHead + "env: {}\nresults: {sizes: [-8]}\n"),
            "hostile.yaml:4: results.sizes[0]: must be a byte count (a whole number from 0)");
  EXPECT_EQ(rejection(kHead + "env: {}\nresults: {sizes: [8], tuned: [fast]}\n"),
            "hostile.yaml:4: results.tuned[0]: must be a number");
  EXPECT_EQ(rejection(kHead + "env: {}\nper_size:\n  - {min_bytes: 0, max_bytes: 100, algo: Ring}\n"
                              "  - {min_bytes: 50, max_bytes: 200, algo: Tree}\n"),
            "hostile.yaml:6: per_size[1].min_bytes: overlaps or precedes the range before it");
  EXPECT_EQ(rejection(kHead + "env: {}\nper_size:\n  - {min_bytes: 10, max_bytes: 5}\n"),
            "hostile.yaml:5: per_size[0].max_bytes: below min_bytes");
  EXPECT_EQ(
      rejection(kHead + "env: {}\nper_size:\n  - {min_bytes: 0, max_bytes: 5, algo: Butterfly}\n"),
      "hostile.yaml:5: per_size[0].algo: 'Butterfly' is not a valid NCCL_ALGO value (a list of Tree, Ring, "
      "CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT, optionally after ^)");
  EXPECT_EQ(rejection(kHead + "env: {}\nper_size:\n  - {min_bytes: 0, max_bytes: 5, algo: \"Ring;id\"}\n"),
            "hostile.yaml:5: per_size[0].algo: 'Ring;id' has characters outside [A-Za-z0-9_,.:^=+-]");
  EXPECT_EQ(rejection(kHead + "env: {}\nper_size:\n  - {min_bytes: 0, max_bytes: 5, proto: LL64}\n"),
            "hostile.yaml:5: per_size[0].proto: 'LL64' is not a valid NCCL_PROTO value (a list of LL, LL128, "
            "Simple, "
            "optionally after ^)");
  EXPECT_TRUE(
      parse_profile(kHead + "env: {}\nper_size:\n  - {min_bytes: 0, max_bytes: 5, algo: \"^NVLS\", proto: "
                            "\"LL,LL128\"}\n",
                    "lists.yaml")
          .ok());
  EXPECT_EQ(rejection(kHead + "env: {}\nper_size:\n  - {min_bytes: 0, max_bytes: 5, channels: 65}\n"),
            "hostile.yaml:5: per_size[0].channels: 65 is outside 0..64");
  EXPECT_EQ(rejection(kHead + "env: {}\nper_size:\n  - {min_bytes: 0, max_bytes: 5, chunk_bytes: -1}\n"),
            "hostile.yaml:5: per_size[0].chunk_bytes: -1 is outside 0..1073741824");
  EXPECT_EQ(
      rejection(kHead + "env: {}\nprovenance: {objective: fastest}\n"),
      "hostile.yaml:4: provenance.objective: unknown objective 'fastest' (balanced, bandwidth, latency)");
  EXPECT_EQ(rejection(kHead + "env: {}\nprovenance: {duration_s: -1}\n"),
            "hostile.yaml:4: provenance.duration_s: must be a finite number from 0");
  EXPECT_EQ(rejection(kHead + "env: {}\nprovenance: {trials: 1, trials: 2}\n"),
            "hostile.yaml:4: provenance.trials: appears twice");
}

TEST(Profile, WriterCleansFreeText) {
  Profile profile = sample_profile();
  profile.shape.gpu = "H100\x1b[31m\xff";
  profile.failed[0].reason = "line one\nline two\t" + std::string(5000, 'x');
  const std::string yaml = profile_to_yaml(profile);
  Result<Profile> parsed = parse_profile(yaml, "cleaned.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(parsed->shape.gpu, "H100 [31m?");
  EXPECT_EQ(parsed->failed[0].reason.substr(0, 19), "line one line two x");
  EXPECT_EQ(parsed->failed[0].reason.size(), kMaxFreeText);
  EXPECT_TRUE(is_clean_text("NVIDIA H100 80GB HBM3 \xc3\xa9"));
  EXPECT_FALSE(is_clean_text("tab\there"));
}

TEST(Profile, WriteProfileLaysOutTheStoreAtomically) {
  const TempDir store("nccltune-profile-store");
  Profile profile = sample_profile();
  std::filesystem::path written;
  ASSERT_TRUE(write_profile(store / "profiles", profile, &written).ok());
  const auto expected = store / "profiles" / "h100-sxm-80g.8gpu.nvswitch.8xib400.nccl2.28" / "2n.yaml";
  EXPECT_EQ(written, expected);
  EXPECT_EQ(profile_path(store / "profiles", profile.shape), expected);
  Result<Profile> back = read_profile(written);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(*back, profile);

  profile.shape.nodes = 4;
  profile.shape.ranks = 32;
  profile.keep_defaults = true;
  profile.env.clear();
  ASSERT_TRUE(write_profile(store / "profiles", profile, &written).ok());
  profile.provenance.trials = 99;  // overwrite in place
  ASSERT_TRUE(write_profile(store / "profiles", profile).ok());
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(expected.parent_path()))
    files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"2n.yaml", "4n.yaml"}));  // no temporary files left
  EXPECT_EQ(read_profile(written)->provenance.trials, 99);

  Profile escape = sample_profile();
  escape.shape.node_type_key = "../escaped";
  Status refused = write_profile(store / "profiles", escape);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("shape.key"), std::string::npos) << refused.error();
  EXPECT_FALSE(std::filesystem::exists(store / "escaped"));
  Profile unsafe = sample_profile();
  unsafe.env["NCCL_ALGO"] = "$(reboot)";
  EXPECT_FALSE(write_profile(store / "profiles", unsafe).ok());
}

TEST(Profile, ReadProfileRefusesHugeFilesAndDirectories) {
  const TempDir dir("nccltune-profile-read");
  write_file(dir / "huge.yaml", kHead + "env: {}\n#" + std::string(2 * kMaxProfileBytes, '#') + "\n");
  Result<Profile> huge = read_profile(dir / "huge.yaml");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error(), (dir / "huge.yaml").string() + ": larger than 1 MiB");
  Result<Profile> directory = read_profile(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.error().find("not a regular file"), std::string::npos) << directory.error();
  EXPECT_FALSE(read_profile(dir / "missing.yaml").ok());
}

TEST(Profile, SizeRanges) {
  const auto choice = [](const char* algo, const char* proto, int channels = 0) {
    SizeChoice c;
    c.algo = algo;
    c.proto = proto;
    c.channels = channels;
    return c;
  };
  const std::vector<std::uint64_t> sizes{8, 1024, 65536, 131072, 1048576, GiB};
  const std::vector<SizeChoice> best{choice("Tree", "LL"),     choice("Tree", "LL"),
                                     choice("Tree", "LL"),     choice("NVLS", "Simple"),
                                     choice("NVLS", "Simple"), choice("NVLS", "Simple")};
  const std::vector<SizeChoice> ranges = size_ranges(sizes, best);
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].min_bytes, 0u);
  EXPECT_EQ(ranges[0].max_bytes, 131071u);
  EXPECT_EQ(ranges[0].algo, "Tree");
  EXPECT_EQ(ranges[0].proto, "LL");
  EXPECT_EQ(ranges[1].min_bytes, 131072u);
  EXPECT_EQ(ranges[1].max_bytes, GiB);  // the largest measured size: NCCL's own choice above it
  EXPECT_EQ(ranges[1].algo, "NVLS");

  // Unsorted input, channels that differ, a size above 16 GiB.
  const std::vector<SizeChoice> three = size_ranges(
      {32 * GiB, 8, 4096}, {choice("Ring", "Simple", 16), choice("Ring", "LL"), choice("Ring", "Simple")});
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0].max_bytes, 4095u);
  EXPECT_EQ(three[1].min_bytes, 4096u);
  EXPECT_EQ(three[1].max_bytes, 32 * GiB - 1);
  EXPECT_EQ(three[2].channels, 16);
  EXPECT_EQ(three[2].max_bytes, 32 * GiB);

  EXPECT_TRUE(size_ranges({}, {}).empty());
  const std::vector<SizeChoice> one = size_ranges({8, 16}, {choice("Ring", "LL")});  // extra sizes ignored
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].min_bytes, 0u);
  EXPECT_EQ(one[0].max_bytes, 8u);

  // The ranges are what a profile holds: they parse back.
  Profile profile = sample_profile();
  profile.collectives["all_reduce"].per_size = three;
  EXPECT_TRUE(parse_profile(profile_to_yaml(profile), "ranges.yaml").ok());
}
