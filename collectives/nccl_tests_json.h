// Reads the file nccl-tests writes with `-J FILE.json` (src/util.cu: one JSON object on one line,
// written by rank 0; format versions 1 to 3, nccl-tests 2.17.3 to 2.19.6) into what
// read_nccl_tests_log gives for the console output of the same run: the same rows, op, ranks,
// hosts, NCCL version and time rule, with the file's precision ("%lf", 6 decimals, where the table
// prints 2). Its quirks are nccl-tests': booleans are the strings "true"/"false", a NaN is the
// string "nan", the root is a "%6i" string ("    -1"), and versions before 2.18.0 spell
// "average_bus_bandwidith" / "bandwidith".
//
// Kept from the file: args (argv; the op is args[0]'s program, the time rule its -a), the
// NCCL_* entries of env (no other variable), nccl_version, config.devices (x nthreads x ngpus:
// the ranks and hosts), results (rows) and the average bus bandwidth. Per-iteration statistics
// (-I 1: out_of_place_per_iter, in_place_per_iter) are not: nccltune/bench/v1 has no field for
// them; a note says so.
#pragma once

#include <string_view>

#include "base/result.h"
#include "collectives/nccl_tests_log.h"

namespace nccltune {

// Errors (one line, naming `origin` and the field): not JSON, not an object, a field of the wrong
// kind, no rows. A row with a "nan" measurement, no out-of-place measurement, or an impossible
// size or count is dropped and named in the notes, as the text reader drops such a row.
Result<NcclTestsLog> read_nccl_tests_json(std::string_view text, std::string_view origin);

// `text` is a -J file rather than console output: its first character that is not blank is '{'.
bool is_nccl_tests_json(std::string_view text);

// read_nccl_tests_json when is_nccl_tests_json(text), else read_nccl_tests_log.
Result<NcclTestsLog> read_nccl_tests_output(std::string_view text, std::string_view origin);

}  // namespace nccltune
