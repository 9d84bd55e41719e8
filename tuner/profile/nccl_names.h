// NCCL's own vocabulary, spelled as NCCL spells it: its algorithms and protocols (in the order of
// its cost tables), the values it documents for the knobs the tuner sets, and its version codes.
// One table for the search space, profiles, the tuner plugin and the fake NCCL.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nccltune {

// NCCL's algorithm names by index (NCCL_ALGO_TREE = 0, ... NCCL_ALGO_PAT = 6), as NCCL 2.28 prints
// them and reads them in NCCL_ALGO (without case).
inline constexpr std::array<std::string_view, 7> kNcclAlgorithms = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
// NCCL's protocol names by index (NCCL_PROTO_LL = 0, LL128, SIMPLE).
inline constexpr std::array<std::string_view, 3> kNcclProtocols = {"LL", "LL128", "Simple"};

// The index of an algorithm or protocol name, compared without case as NCCL does; nullopt for
// anything else.
std::optional<int> nccl_algorithm_index(std::string_view name);
std::optional<int> nccl_protocol_index(std::string_view name);
// NCCL's spelling of an index ("CollNetDirect", "LL128"); "?" outside the table.
std::string_view nccl_algorithm_name(int index);
std::string_view nccl_protocol_name(int index);

// Whether NCCL ever runs `algo` with `proto`: NCCL 2.28 runs NVLS, NVLSTree, CollNetDirect,
// CollNetChain and PAT with Simple only (ncclTopoTuneModel in src/graph/tuning.cc gives the other
// pairs no bandwidth), so a list that leaves only such a pair makes NCCL fail.
bool nccl_runs_pair(std::string_view algo, std::string_view proto);
// Whether NCCL's cost model gives `collective` (nccl-tests name) the pair at all: nccl_runs_pair,
// and by function (ncclTopoTuneModel, src/graph/tuning.cc, 2.28.9) Broadcast and Reduce Ring
// only, AllGather and ReduceScatter Ring, PAT, NVLS and CollNetDirect, AllReduce all but PAT.
// alltoall (send/recv) has no cost table: true.
bool nccl_runs_pair_for(std::string_view collective, std::string_view algo, std::string_view proto);

// Names NCCL reads without case (algorithms, protocols, GDR levels).
bool same_text_ignoring_case(std::string_view a, std::string_view b);

// The name NCCL 2.24+ gives a collective in a scoped NCCL_ALGO / NCCL_PROTO value ("allreduce"),
// for its nccl-tests name ("all_reduce"); nullopt for alltoall (NCCL runs it as send/recv, which
// no NCCL_ALGO / NCCL_PROTO applies to) and for unknown names.
std::optional<std::string_view> nccl_function_name(std::string_view collective);
// The first NCCL that reads such scoped values (2.24.0, as ncclGetVersion codes it).
inline constexpr int kScopedListsNcclVersion = 22400;
// How NCCL's INFO log names the collective ("AllReduce" in its TUNING lines); nullopt likewise.
std::optional<std::string_view> nccl_log_op_name(std::string_view collective);

// The list a scoped NCCL_ALGO / NCCL_PROTO value ("Ring;allgather:Ring,Tree") gives
// `collective` (nccl-tests name), as NCCL 2.24 reads it: the entry "<function>:list" for that
// collective, else the entry without a function; nullopt when neither is there (NCCL's own
// choice). A value without ';' or ':' is itself the list for every collective.
std::optional<std::string> nccl_list_for(std::string_view value, std::string_view collective);

// One ';'-separated entry of such a value: "allgather:Ring,Tree" is {"allgather", "Ring,Tree"},
// a plain "Ring" is {nullopt, "Ring"}. Every entry, empty ones too, in order.
struct NcclListEntry {
  std::optional<std::string_view> function;
  std::string_view list;
};
std::vector<NcclListEntry> nccl_list_entries(std::string_view value);

// Whether `name` is a function NCCL 2.24 reads a list for ("AllGather"; without case).
bool is_nccl_function_name(std::string_view name);

// Whether an NCCL_ALGO / NCCL_PROTO value ("Ring,Tree", "^LL128", "allgather:Ring;Tree") lets
// NCCL use `name` for `collective`, names compared without case as NCCL reads them. An empty
// list names nothing; a value that gives the collective no list allows everything.
bool nccl_list_allows(std::string_view list, std::string_view name,
                      std::string_view collective = "all_reduce");

// An algorithm or protocol as NCCL's log prints it ("NVLS_TREE", "COLLNET_DIRECT") in the
// spelling its env values use, case aside: without the '_' ("NVLSTREE").
std::string nccl_name_from_log(std::string_view logged);

// What is wrong with `value` for the knob `name` when NCCL documents the knob's values
// (NCCL_ALGO, NCCL_PROTO, *_NCHANNELS, NCCL_NET_GDR_LEVEL, ...); nullopt when it is possible or
// the knob is not one of those. Does not check the safe character set (env_names.h).
std::optional<std::string> knob_value_problem(std::string_view name, std::string_view value);

// NCCL's transport settings: how bytes cross the network, not which algorithm moves them, so their
// effect does not depend on the node count (NCCL_NET_GDR_LEVEL, NCCL_NET_GDR_READ, NCCL_IB_*,
// NCCL_NET_*, NCCL_SOCKET_*, NCCL_CROSS_NIC, NCCL_PXN_DISABLE, NCCL_BUFFSIZE, ...). tune screens them
// once, at the largest node count, and a job of a node count that was not measured gets them from
// the nearest measured one; anything else counts as depending on the node count.
bool is_transport_setting(std::string_view name);

// What tune searches again at every node count: the algorithm, the protocol and the channel bounds
// (NCCL_ALGO, NCCL_PROTO, NCCL_MIN/MAX_NCHANNELS, NCCL_MIN/MAX_CTAS, NCCL_NVLS_NCHANNELS).
bool is_searched_per_node_count(std::string_view name);

// Whether NCCL reads the knob's value without case (NCCL_ALGO, NCCL_PROTO; not NCCL_NET_GDR_LEVEL).
bool is_case_insensitive_knob(std::string_view name);

// Whether NCCL reads the environment variable `name` (NCCL_ALGO, NCCL_IB_HCA; compared with
// case, as getenv does): one of the names NCCL's own source reads (nccl_env_names.cpp), in the
// minor release of `nccl_version` (parse_nccl_version's code) when that is 2.18-2.30, else in any
// release of that table (0: the profile does not say which NCCL).
bool is_known_nccl_variable(std::string_view name, int nccl_version = 0);

// The NCCL version a profile was tuned with, as parse_nccl_version codes it: shape.nccl_version
// ("2.28.9"), else the last ".ncclX.Y" part of its node type key ("...pix.nccl2.28"); 0 when
// neither says.
int profile_nccl_version(std::string_view nccl_version, std::string_view node_type_key);

// What is wrong with an NCCL_ALGO / NCCL_PROTO value as NCCL `nccl_version` (0: unknown) parses
// it (parseList, src/graph/tuning.cc): a list of names ("Ring,Tree", "^LL128"), or from 2.24 on
// entries joined by ';', each "<function>:<list>" (broadcast, reduce, allgather, reducescatter,
// allreduce, without case) but the first, which may be a plain list. Every name NCCL's own, none
// twice in a list, no function twice, no empty entry. nullopt when NCCL reads it.
std::optional<std::string> nccl_list_problem(std::string_view name, std::string_view value,
                                             int nccl_version = 0);

// "2.24" -> 22400, "2.28.9" -> 22809, "22809" -> 22809 (NCCL's code since 2.9).
Result<int> parse_nccl_version(std::string_view text);

}  // namespace nccltune
