#include "profile/env_names.h"

#include <gtest/gtest.h>

#include <string>

using namespace nccltune;

TEST(EnvNames, SafeNamesAndValues) {
  EXPECT_TRUE(is_safe_env_name("NCCL_ALGO"));
  EXPECT_FALSE(is_safe_env_name("NCCL_"));
  EXPECT_FALSE(is_safe_env_name("nccl_algo"));
  EXPECT_FALSE(is_safe_env_name("LD_PRELOAD"));
  EXPECT_FALSE(is_safe_env_name("NCCL_A-B"));
  EXPECT_TRUE(is_safe_env_value("^NVLS,PAT"));
  EXPECT_TRUE(is_safe_env_value("mlx5_0:1,=eth0+x"));
  for (const char* bad :
       {"", "$(id)", "`id`", "a;b", "a'b", "a\"b", "a b", "a\nb", "a|b", "a&b", "a/b", "a\\b"})
    EXPECT_FALSE(is_safe_env_value(bad)) << bad;
  EXPECT_FALSE(is_safe_env_value(std::string(1025, 'a')));
}

TEST(EnvNames, ListsPerCollectiveForAlgoAndProtoOnly) {
  EXPECT_TRUE(is_safe_env_setting("NCCL_ALGO", "allreduce:Tree,Ring;allgather:Ring"));
  EXPECT_TRUE(is_safe_env_setting("NCCL_PROTO", "Simple;AllGather:^LL;reducescatter:LL128,Simple"));
  EXPECT_TRUE(is_safe_env_setting("NCCL_ALGO", "Ring,Tree"));  // plain values as before
  // ';' where NCCL reads no list, names NCCL does not know (NCCL 2.24 fails init on them),
  // functions it has no list for, two plain entries, empty entries.
  EXPECT_FALSE(is_safe_env_setting("NCCL_BUFFSIZE", "1;2"));
  EXPECT_FALSE(is_safe_env_setting("NCCL_ALGO", "Ring;reboot"));
  EXPECT_FALSE(is_safe_env_setting("NCCL_ALGO", "allreduce:Ring;alltoall:Ring"));
  EXPECT_FALSE(is_safe_env_setting("NCCL_PROTO", "allreduce:Ring;allgather:LL"));
  EXPECT_FALSE(is_safe_env_setting("NCCL_ALGO", "Ring;Tree"));
  EXPECT_FALSE(is_safe_env_setting("NCCL_ALGO", "allreduce:Ring;"));
  EXPECT_FALSE(is_safe_env_setting("NCCL_ALGO", "allreduce:Ring;allgather:Ring $(id)"));
  EXPECT_FALSE(is_safe_env_setting("NCCL_ALGO", "allreduce:Ring;allgather:'Ring'"));
}

TEST(EnvNames, AllowableNames) {
  EXPECT_TRUE(is_allowable_env_name("UCX_TLS"));
  EXPECT_TRUE(is_allowable_env_name("NCCL_IB_HCA"));
  EXPECT_FALSE(is_allowable_env_name("_X"));
  EXPECT_FALSE(is_allowable_env_name("1X"));
  EXPECT_FALSE(is_allowable_env_name("ucx_tls"));
  EXPECT_FALSE(is_allowable_env_name("A-B"));
  EXPECT_FALSE(is_allowable_env_name(""));
  EXPECT_FALSE(is_allowable_env_name(std::string(129, 'A')));
  EXPECT_FALSE(is_allowable_env_name("LD_PRELOAD"));  // well-formed, but denied
}

TEST(EnvNames, DeniedNames) {
  for (const char* name : {"BASH_ENV",
                           "ENV",
                           "PATH",
                           "IFS",
                           "PS4",
                           "GLIBC_TUNABLES",
                           "LD_PRELOAD",
                           "LD_LIBRARY_PATH",
                           "LD_AUDIT",
                           "BASH_FUNC_X%%",
                           "PYTHONPATH",
                           "CUDA_INJECTION64_PATH",
                           "NCCL_NET_PLUGIN",
                           "NCCL_TUNER_PLUGIN",
                           "NCCL_PROFILER_PLUGIN",
                           "NCCL_ENV_PLUGIN",
                           "NCCL_CONF_FILE",
                           "NCCL_DEBUG_FILE",
                           "NCCL_TOPO_DUMP_FILE",
                           "NCCL_GRAPH_DUMP_FILE",
                           "NCCL_TOPO_FILE",
                           "NCCL_GRAPH_FILE",
                           "NCCL_TUNER_CONFIG_FILE",
                           "NCCL_PROFILE_DUMP_FILE",
                           "NCCL_INSPECTOR_DUMP_DIR",
                           "NCCL_GIN_PLUGIN",
                           "NCCL_IBVERBS_LIB",
                           "NCCL_CHECKPOINT_KVS_PATH"})
    EXPECT_TRUE(is_denied_env_name(name)) << name;
  for (const char* name : {"NCCL_ALGO", "NCCL_IB_HCA", "NCCL_DEBUG", "NCCL_P2P_DIRECT_DISABLE", "UCX_TLS",
                           "ENVX", "PATHS", "NCCL_NET", "NCCL_DEBUG_SUBSYS", "NCCL_PLUGIN_P2P"})
    EXPECT_FALSE(is_denied_env_name(name)) << name;
}
