#include "search/journal.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::read_file;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

JournalEntry sample_entry(int repeat = 0) {
  JournalEntry e;
  e.node_type_key = "h100-sxm-80g.8gpu.nvswitch.8xib400.nccl2.28";
  e.nccl_version = "2.28.9";
  e.env = {{"NCCL_PROTO", "Simple"}, {"NCCL_ALGO", "Ring"}};
  e.phase = TrialPhase::screen;
  e.iterations = 20;
  e.warmup = 5;
  e.sizes = {8, 1048576, std::uint64_t{1} << 34};
  e.outcome = TrialOutcome::ok;
  e.reason = "";
  e.time_us = {10.5, 27.8, 1.0 / 3};
  e.busbw = {0.001, 66.0, 370.25};
  e.duration_s = 3.25;
  e.repeat = repeat;
  return e;
}

void expect_same(const JournalEntry& a, const JournalEntry& b) {
  EXPECT_EQ(journal_key(a), journal_key(b));
  EXPECT_EQ(a.outcome, b.outcome);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.time_us, b.time_us);
  EXPECT_EQ(a.busbw, b.busbw);
  EXPECT_EQ(a.duration_s, b.duration_s);
  EXPECT_EQ(a.env, b.env);
}

void append_raw(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::app) << text;
}

}  // namespace

TEST(Journal, KeyIsStableUnderEnvOrdering) {
  JournalEntry a = sample_entry();
  JournalEntry b = sample_entry();
  b.env.clear();
  b.env["NCCL_ALGO"] = "Ring";
  b.env["NCCL_PROTO"] = "Simple";
  b.outcome = TrialOutcome::timeout;  // results are not part of the key
  b.busbw.clear();
  EXPECT_EQ(journal_key(a), journal_key(b));
  EXPECT_EQ(journal_key(a),
            "h100-sxm-80g.8gpu.nvswitch.8xib400.nccl2.28|2.28.9|NCCL_ALGO=Ring NCCL_PROTO=Simple|screen|20|5|"
            "8,1048576,17179869184|0");
  for (auto change : std::vector<void (*)(JournalEntry&)>{
           [](JournalEntry& e) { e.repeat = 1; }, [](JournalEntry& e) { e.phase = TrialPhase::halving; },
           [](JournalEntry& e) { e.iterations = 40; }, [](JournalEntry& e) { e.warmup = 2; },
           [](JournalEntry& e) { e.sizes.pop_back(); }, [](JournalEntry& e) { e.nccl_version = "2.27.3"; },
           [](JournalEntry& e) { e.node_type_key = "other"; },
           [](JournalEntry& e) { e.env["NCCL_ALGO"] = "Ring,Tree"; },
           [](JournalEntry& e) { e.env.erase("NCCL_PROTO"); }}) {
    JournalEntry changed = sample_entry();
    change(changed);
    EXPECT_NE(journal_key(changed), journal_key(a));
  }
}

TEST(Journal, LineRoundTrip) {
  JournalEntry entry = sample_entry();
  entry.reason = "worker said \"boom\"\n\xff";
  entry.time_us.push_back(std::numeric_limits<double>::quiet_NaN());
  entry.busbw.push_back(std::numeric_limits<double>::infinity());
  const std::string line = journal_line(entry);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.rfind("{\"schema\":\"nccltune/journal/v1\",\"shape_key\":", 0), 0u) << line;
  Result<JournalEntry> back = parse_journal_line(line);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(journal_key(*back), journal_key(entry));
  EXPECT_EQ(back->reason, "worker said \"boom\"\n\xef\xbf\xbd");  // invalid UTF-8 replaced
  EXPECT_TRUE(std::isnan(back->time_us.back()));
  EXPECT_TRUE(std::isnan(back->busbw.back()));  // non-finite numbers are null in JSON
  EXPECT_EQ(back->time_us[2], 1.0 / 3);

  EXPECT_EQ(parse_journal_line("{").error(), "not valid JSON");
  EXPECT_EQ(parse_journal_line("[1]").error(), "not a JSON object");
  EXPECT_EQ(parse_journal_line("{\"schema\":\"nccltune/journal/v1\"}").error(), "missing \"shape_key\"");
  EXPECT_EQ(parse_journal_line("{\"schema\":\"other\"}").error(), "schema is not nccltune/journal/v1");
  std::string wrong_type = line;
  wrong_type.replace(wrong_type.find("\"iterations\":20"), 15, "\"iterations\":\"20\"");
  EXPECT_EQ(parse_journal_line(wrong_type).error(), "\"iterations\" must be a whole number from 0");
}

TEST(Journal, SeveralCollectivesAndTheSizesTheirPointsMeasured) {
  JournalEntry entry = sample_entry();
  entry.sizes = {8, 1024};
  entry.collectives = {"all_reduce", "all_gather"};
  entry.point_bytes = {8, 1024, 0, 1024};  // all_gather of 8 B on 4 ranks measures 0 B
  entry.time_us = {1, 2, 3, 4};
  entry.busbw = {0.5, 1, 0, 2};
  Result<JournalEntry> back = parse_journal_line(journal_line(entry));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->collectives, entry.collectives);
  EXPECT_EQ(back->point_bytes, entry.point_bytes);
  // Not the key of the same trial of all_reduce alone, whose key is what it was before.
  JournalEntry alone = sample_entry();
  EXPECT_NE(journal_key(*back), journal_key(alone));
  EXPECT_EQ(journal_key(alone).find("all_reduce"), std::string::npos);
  std::vector<std::uint64_t> sizes;
  EXPECT_EQ(journal_points(*back, sizes),
            (std::vector<std::string>{"all_reduce", "all_reduce", "all_gather", "all_gather"}));
  EXPECT_EQ(sizes, entry.point_bytes);
  back->busbw.pop_back();  // numbers that do not cover every point: none
  EXPECT_TRUE(journal_points(*back, sizes).empty());

  std::string line = journal_line(entry);
  line.replace(line.find("\"all_gather\""), 12, "\"allgather\"");
  EXPECT_EQ(
      parse_journal_line(line).error(),
      "\"collectives\" items must be collective names (all_reduce, all_gather, reduce_scatter, alltoall, "
      "broadcast, reduce)");
}

TEST(Journal, AppendAndRead) {
  const TempDir dir("nccltune-journal-append");
  const auto path = dir / "journal.jsonl";
  {
    Result<Journal> journal = Journal::open(path);
    ASSERT_TRUE(journal.ok()) << journal.error();
    EXPECT_EQ(journal->path(), path);
    ASSERT_TRUE(journal->append(sample_entry(0)).ok());
    ASSERT_TRUE(journal->append(sample_entry(1)).ok());
    // Another run cannot write the same journal meanwhile.
    Result<Journal> second = Journal::open(path);
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.error().find("in use"), std::string::npos) << second.error();
  }
  {
    Result<Journal> reopened = Journal::open(path);  // the lock went with the first
    ASSERT_TRUE(reopened.ok()) << reopened.error();
    JournalEntry failed = sample_entry(2);
    failed.outcome = TrialOutcome::crash;
    failed.reason = "rank 1: worker killed by signal 11";
    failed.time_us.clear();
    failed.busbw.clear();
    ASSERT_TRUE(reopened->append(failed).ok());
  }
  Result<std::vector<JournalEntry>> entries = Journal::read(path);
  ASSERT_TRUE(entries.ok()) << entries.error();
  ASSERT_EQ(entries->size(), 3u);
  expect_same((*entries)[0], sample_entry(0));
  expect_same((*entries)[1], sample_entry(1));
  EXPECT_EQ((*entries)[2].outcome, TrialOutcome::crash);
  EXPECT_TRUE((*entries)[2].busbw.empty());
  const std::string text = read_file(path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  EXPECT_EQ(text.back(), '\n');

  Result<Journal> moved_from = Journal::open(dir / "other.jsonl");
  ASSERT_TRUE(moved_from.ok());
  Journal moved = std::move(*moved_from);
  EXPECT_TRUE(moved.append(sample_entry()).ok());
  EXPECT_FALSE(Journal::read(dir / "missing.jsonl").ok());
  EXPECT_FALSE(Journal::open(dir / "no-such-dir" / "journal.jsonl").ok());
}

TEST(Journal, TruncatedLastLineIsDroppedAndCutBeforeAppending) {
  const TempDir dir("nccltune-journal-truncated");
  const auto path = dir / "journal.jsonl";
  {
    Result<Journal> journal = Journal::open(path);
    ASSERT_TRUE(journal.ok()) << journal.error();
    ASSERT_TRUE(journal->append(sample_entry(0)).ok());
    ASSERT_TRUE(journal->append(sample_entry(1)).ok());
  }
  const std::string line = journal_line(sample_entry(2));
  append_raw(path, line.substr(0, line.size() / 2));  // killed mid-write

  std::vector<std::string> warnings;
  Result<std::vector<JournalEntry>> entries = parse_journal(read_file(path), "journal.jsonl", &warnings);
  ASSERT_TRUE(entries.ok()) << entries.error();
  EXPECT_EQ(entries->size(), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("journal.jsonl:3: dropped a truncated or corrupt last line", 0), 0u)
      << warnings[0];
  ASSERT_TRUE(Journal::read(path).ok());

  {
    Result<Journal> journal = Journal::open(path);  // cuts the partial line off
    ASSERT_TRUE(journal.ok()) << journal.error();
    ASSERT_TRUE(journal->append(sample_entry(3)).ok());
  }
  warnings.clear();
  entries = parse_journal(read_file(path), "journal.jsonl", &warnings);
  ASSERT_TRUE(entries.ok()) << entries.error();
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[2].repeat, 3);

  // A complete entry whose newline was lost is kept, and the next one starts on its own line.
  append_raw(path, journal_line(sample_entry(4)));
  {
    Result<Journal> journal = Journal::open(path);
    ASSERT_TRUE(journal.ok()) << journal.error();
    ASSERT_TRUE(journal->append(sample_entry(5)).ok());
  }
  entries = Journal::read(path);
  ASSERT_TRUE(entries.ok()) << entries.error();
  ASSERT_EQ(entries->size(), 5u);
  EXPECT_EQ((*entries)[3].repeat, 4);
  EXPECT_EQ((*entries)[4].repeat, 5);

  // Power loss can leave zeros: the same.
  append_raw(path, std::string(64, '\0'));
  {
    Result<Journal> journal = Journal::open(path);
    ASSERT_TRUE(journal.ok()) << journal.error();
  }
  entries = Journal::read(path);
  ASSERT_TRUE(entries.ok()) << entries.error();
  EXPECT_EQ(entries->size(), 5u);
  EXPECT_EQ(read_file(path).back(), '\n');
}

TEST(Journal, CorruptMiddleLineIsAnError) {
  const std::string good = journal_line(sample_entry()) + "\n";
  Result<std::vector<JournalEntry>> entries =
      parse_journal(good + "{\"schema\":\"nccltune/journal/v1\", garbage\n" + good, "/tmp/j.jsonl");
  ASSERT_FALSE(entries.ok());
  EXPECT_EQ(entries.error(), "/tmp/j.jsonl:2: invalid journal entry: not valid JSON");
  // Blank lines are skipped, and count for line numbers.
  entries = parse_journal(good + "\n\n" + good + "[]\n" + good, "j.jsonl");
  ASSERT_FALSE(entries.ok());
  EXPECT_EQ(entries.error(), "j.jsonl:5: invalid journal entry: not a JSON object");
  entries = parse_journal(good + "\n" + good + "\n", "j.jsonl");
  ASSERT_TRUE(entries.ok()) << entries.error();
  EXPECT_EQ(entries->size(), 2u);
  entries = parse_journal("", "j.jsonl");
  ASSERT_TRUE(entries.ok());
  EXPECT_TRUE(entries->empty());

  const TempDir dir("nccltune-journal-corrupt");
  write_file(dir / "journal.jsonl", good + "not json\n" + good);
  Result<std::vector<JournalEntry>> read = Journal::read(dir / "journal.jsonl");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error(), (dir / "journal.jsonl").string() + ":2: invalid journal entry: not valid JSON");
}

TEST(Journal, OpenRefusesWhatIsNotAJournalAndLeavesItAsItWas) {
  const TempDir dir("nccltune-journal-foreign");
  const std::string notes = "# my notes\nline two\nno newline at the end";
  write_file(dir / "notes.txt", notes);
  Result<Journal> journal = Journal::open(dir / "notes.txt");
  ASSERT_FALSE(journal.ok());
  EXPECT_EQ(journal.error(), (dir / "notes.txt").string() +
                                 ":1: invalid journal entry: not valid JSON (tune appends only to a nccltune "
                                 "journal, or creates one)");
  EXPECT_EQ(read_file(dir / "notes.txt"), notes);

  // One good entry followed by a foreign last line: the last line is not cut.
  const std::string mixed = journal_line(sample_entry()) + "\nhello\n";
  write_file(dir / "mixed.jsonl", mixed);
  EXPECT_FALSE(Journal::open(dir / "mixed.jsonl").ok());
  EXPECT_EQ(read_file(dir / "mixed.jsonl"), mixed);
  // Reading it is refused the same way, where a truncated entry would only be dropped.
  const Result<std::vector<JournalEntry>> read = Journal::read(dir / "mixed.jsonl");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error(), (dir / "mixed.jsonl").string() + ":2: invalid journal entry: not valid JSON");

  write_file(dir / "real.jsonl", journal_line(sample_entry()) + "\n");
  std::filesystem::create_symlink(dir / "real.jsonl", dir / "link.jsonl");
  journal = Journal::open(dir / "link.jsonl");
  ASSERT_FALSE(journal.ok());
  EXPECT_EQ(journal.error(), (dir / "link.jsonl").string() + ": is a symlink; name the journal file itself");

  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  journal = Journal::open(dir / "fifo");  // returns at once: no writer is waited for
  ASSERT_FALSE(journal.ok());
  EXPECT_EQ(journal.error(), (dir / "fifo").string() + ": is a FIFO, not a journal file");
}

// A trial on split communicators: the request's comms go into the key ("|comms:"), each point's
// communicator is recorded ("point_comms") and read back strictly; a line without them is the
// world's, with the key it always had.
TEST(Journal, CommunicatorsOfATrialAndOfEachPoint) {
  JournalEntry entry = sample_entry();
  entry.sizes = {8, 1024};
  entry.comms = {"world", "rail"};
  entry.point_comms = {"world", "world", "rail", "rail"};
  entry.time_us = {1, 2, 3, 4};
  entry.busbw = {0.5, 1, 0.25, 2};
  const std::string line = journal_line(entry);
  EXPECT_NE(line.find(R"("comms":["world","rail"])"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("point_comms":["world","world","rail","rail"])"), std::string::npos) << line;
  Result<JournalEntry> back = parse_journal_line(line);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->comms, entry.comms);
  EXPECT_EQ(back->point_comms, entry.point_comms);
  EXPECT_EQ(journal_line(*back), line);
  const std::string key = journal_key(*back);
  EXPECT_EQ(key.substr(key.size() - std::string("|comms:world,rail").size()), "|comms:world,rail");
  std::vector<std::uint64_t> sizes;
  EXPECT_EQ(journal_points(*back, sizes).size(), 4u);  // the grid once per communicator
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{8, 1024, 8, 1024}));

  // The world alone: the key, the line and the points as before.
  const JournalEntry world = sample_entry();
  EXPECT_EQ(journal_key(world).find("comms"), std::string::npos);
  EXPECT_EQ(journal_line(world).find("comms"), std::string::npos);
  Result<JournalEntry> old = parse_journal_line(journal_line(world));
  ASSERT_TRUE(old.ok()) << old.error();
  EXPECT_EQ(old->comms, std::vector<std::string>{"world"});
  EXPECT_TRUE(old->point_comms.empty());
  EXPECT_NE(journal_key(*back), journal_key(world));

  std::string unknown = line;
  unknown.replace(unknown.find(R"("rail"])"), 6, R"("pod")");
  EXPECT_EQ(parse_journal_line(unknown).error(),
            "\"comms\" items must be communicator names (world, rail, node)");
  std::string stray = line;
  stray.replace(stray.rfind(R"("rail")"), 6, R"("node")");
  EXPECT_EQ(parse_journal_line(stray).error(), "\"point_comms\" names 'node', which \"comms\" does not");
  std::string short_list = line;
  short_list.replace(short_list.find(R"("point_comms":["world",)"), 23, R"("point_comms":[)");
  EXPECT_EQ(parse_journal_line(short_list).error(), "\"point_comms\" must have one communicator per point");
}

TEST(Journal, NonFiniteNumbersAreRefused) {
  const std::string line = journal_line(sample_entry());
  const std::string key = "\"duration_s\":";
  for (const std::string literal : {"1e999", "NaN"}) {
    std::string changed = line;
    changed.insert(changed.find(key) + key.size(), literal + ",\"x\":");
    EXPECT_EQ(parse_journal_line(changed).error(), "not valid JSON") << literal;
  }
}
