// Rows of an alltoallv_perf table that NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY=1 broke: put back
// together, the per-rank summaries inside them skipped.
#include "collectives/nccl_tests_log_lines.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "base/text_words.h"

namespace nccltune::nccl_tests_detail {
namespace {

// ---- rows broken by alltoallv's per-rank summary ----------------------------------------------
//
// alltoallv_perf with NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY=1 prints, from its busbw computation, a
// "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: ... nranks=N ..." line and N "#   rank=R send_bytes=S
// recv_bytes=V alg_bw=A bus_bw=B" lines in the middle of a row (src/alltoallv.cu): after the row's
// first columns and again after its out-of-place measurement, so the row goes on after the last
// rank line's bus_bw word. The row is put back together and the summary skipped.

constexpr std::string_view kAlltoallvSummary = "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY:";

// nranks=N of a summary line; 0 when it does not say.
int64_t summary_rank_count(std::string_view summary) {
  for (const std::string_view word : split_words(summary))
    if (word.starts_with("nranks=")) return std::max<int64_t>(0, to_int(word.substr(7)).value_or(0));
  return 0;
}

// What follows the bus_bw word of a "#   rank=R ... bus_bw=B" line for rank R; nullopt for any
// other line.
std::optional<std::string_view> after_summary_rank_line(std::string_view line, int64_t rank) {
  const std::vector<std::string_view> words = comment_words(line);
  if (words.size() < 5 || words[0] != fmt::format("rank={}", rank) || !words[4].starts_with("bus_bw="))
    return std::nullopt;
  return line.substr(static_cast<std::size_t>(words[4].data() - line.data()) + words[4].size());
}

}  // namespace

UnbrokenLines unbreak_alltoallv_rows(const std::vector<std::string_view>& lines) {
  UnbrokenLines out;
  std::optional<std::string> row;  // a row the summary broke, so far
  std::size_t row_start = 0;
  int64_t rank_lines_left = 0;
  int64_t next_rank = 0;  // the summary lists ranks 0..N-1 in order
  auto drop_row = [&] {
    if (row) out.cut_short.push_back(row_start);
    row.reset();
    rank_lines_left = 0;
  };
  // A summary begins at `marker` of `text`: its rank lines follow.
  auto begin_summary = [&](std::string_view text) {
    ++out.summaries;
    rank_lines_left = summary_rank_count(text);
    next_rank = 0;
    if (rank_lines_left == 0) drop_row();
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (rank_lines_left > 0) {
      if (const auto rest = after_summary_rank_line(line, next_rank)) {
        ++next_rank;
        if (--rank_lines_left > 0 || !row) continue;
        const std::size_t marker = rest->find(kAlltoallvSummary);  // the in-place half's summary
        *row += rest->substr(0, marker);
        if (marker != std::string_view::npos) {
          begin_summary(rest->substr(marker));
          continue;
        }
        out.joined.push_back(std::move(*row));
        row.reset();
        out.lines.push_back(NumberedLine{out.joined.back(), row_start});
        continue;
      }
      drop_row();  // the summary ended early: read this line as any other
    }
    const std::size_t marker = line.find(kAlltoallvSummary);
    if (marker == std::string_view::npos) {
      out.lines.push_back(NumberedLine{line, i + 1});
      continue;
    }
    const std::string_view before = line.substr(0, marker);
    if (!is_comment(before) && before.find_first_not_of(" \t") != std::string_view::npos) {
      drop_row();
      row = std::string(before);
      row_start = i + 1;
    }
    begin_summary(line.substr(marker));
  }
  drop_row();
  return out;
}

}  // namespace nccltune::nccl_tests_detail
