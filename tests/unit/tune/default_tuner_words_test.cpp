// tune's header line and the profile's note on the tuner NCCL loads by default.
#include "tune/default_tuner_words.h"

#include <gtest/gtest.h>

namespace nccltune {
namespace {

NcclTunerLibrary ofi_tuner() {
  NcclTunerLibrary found;
  found.library = "libnccl-net.so";
  found.path = "/opt/amazon/ofi-nccl/lib/libnccl-net.so";
  found.symbol = "ncclTunerPlugin_v3";
  found.from_net_plugin = true;
  return found;
}

TEST(DefaultTunerWords, NoneSaysNoneAndWritesNoNote) {
  EXPECT_EQ(default_tuner_header(std::nullopt, std::nullopt, true), "NCCL's default tuner: none");
  EXPECT_EQ(default_tuner_note(std::nullopt, std::nullopt), "");
  NcclTunerLibrary no_table = ofi_tuner();
  no_table.library = "libnccl-tuner.so";
  no_table.symbol.clear();
  no_table.from_net_plugin = false;
  EXPECT_EQ(default_tuner_header(no_table, std::nullopt, false),
            "NCCL's default tuner: none (libnccl-tuner.so (/opt/amazon/ofi-nccl/lib/libnccl-net.so) exports no tuner "
            "table NCCL reads)");
}

TEST(DefaultTunerWords, AFoundTunerRunsTheBaselinesAndPairModeReplacesIt) {
  const std::string header = default_tuner_header(ofi_tuner(), std::string("nccl_ofi_tuner"), true);
  EXPECT_EQ(header,
            "NCCL's default tuner: libnccl-net.so (/opt/amazon/ofi-nccl/lib/libnccl-net.so) exports "
            "ncclTunerPlugin_v3 (in the net plugin) (NCCL's log: nccl_ofi_tuner): baselines run under it, as jobs "
            "that leave NCCL_TUNER_PLUGIN unset do; pair-mode trials replace it with nccltune's tuner plugin "
            "(NCCL loads one tuner)");
  EXPECT_EQ(default_tuner_header(ofi_tuner(), std::nullopt, false).find("pair-mode"), std::string::npos);
  const std::string note = default_tuner_note(ofi_tuner(), std::nullopt);
  EXPECT_NE(note.find("measured under NCCL's default tuner (libnccl-net.so"), std::string::npos) << note;
  EXPECT_NE(note.find("per_size, served by nccltune's tuner plugin, replaces it"), std::string::npos) << note;
}

TEST(DefaultTunerWords, WhatNcclLoggedCountsWhereTheLookupFoundNone) {
  // NCCL's own search can differ from this process's (libnccl.so's RUNPATH, nccl.conf).
  const std::string header = default_tuner_header(std::nullopt, std::string("gIB"), false);
  EXPECT_EQ(header,
            "NCCL's default tuner: the probe trial's NCCL loaded gIB: baselines run under it, as jobs that leave "
            "NCCL_TUNER_PLUGIN unset do");
  EXPECT_NE(default_tuner_note(std::nullopt, std::string("gIB")), "");
}

}  // namespace
}  // namespace nccltune
