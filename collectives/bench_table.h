// A BenchResult as nccl-tests prints it, so the two compare line by line: the same header,
// columns, widths and precision (nccl-tests 2.13-2.18, src/common.cu), the same footer, plus one
// line saying how per-rank times were combined. Trailing blanks are not printed.
//
// Pieces for printing rows as they are measured (`nccltune bench`), and the whole table.
#pragma once

#include <string>

#include "collectives/bench_result.h"

namespace nccltune {

// "#", the out-of-place/in-place line, the column names and the units, each ending in '\n'.
std::string bench_table_header();

// One row: size, count, type, redop, root, then time, algbw, busbw and #wrong out-of-place and
// in-place ("N/A" where nothing was checked). Ends in '\n'.
std::string bench_table_row(const BenchRow& row);

// "# Out of bounds values : N OK|FAILED" (N: measurements with wrong data), "# Avg bus
// bandwidth    : X" (result.avg_busbw, else the mean of every busbw), "# Peak bus bandwidth :
// ..." when result.peak is set (peak_summary), "# Time rule ...", "#".
std::string bench_table_footer(const BenchResult& result);

std::string render_bench_table(const BenchResult& result);

}  // namespace nccltune
