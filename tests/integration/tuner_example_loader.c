/* Loads NVIDIA's example tuner plugin (NCCL's ext-tuner/example, plugins/tuner/example since 2.29)
   as NCCL 2.28-2.30 do (src/plugin/tuner.cc: dlopen, then ncclTunerPlugin_v6, else _v5), inits
   one communicator of RANKS ranks on NODES nodes (the plugin reads NCCL_TUNER_CONFIG_FILE there)
   and asks for each query on stdin, one per line: "FUNCTION BYTES PIPE_OPS REG_BUFF", FUNCTION
   being NCCL's number (0 broadcast, 1 reduce, 2 allgather, 3 reducescatter, 4 allreduce, 5
   sendrecv). The cost table is laid out as NCCL's getAlgoInfo (src/enqueue.cc) has it: one
   `float cost[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]` passed as `float**`, every pair valid
   (cost 10 + 3 * algorithm + protocol), between guard cells; nChannels starts at 0 as NCCL's
   nMaxChannels does. For each query it prints, flushed before the next one (a crash shows which
   query did it):
     FUNCTION BYTES: ALGORITHM PROTOCOL channels N   the pair the plugin set to 0.0, NCCL's names
     FUNCTION BYTES: none channels N                 no pair changed
     FUNCTION BYTES: bad ...                         anything else (a cell set to another value,
                                                     several set to 0.0, a guard cell written)
   and the plugin's log lines on stderr. A C program linking only the C library (and libdl).
   usage: tuner_example_loader PLUGIN.so NODES RANKS < QUERIES */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kAlgorithms = 7, kProtocols = 3, kGuards = 8, kCompcaps = 4, kScales = 3, kHwLinks = 3 };

/* NCCL's tuner_v5.h / tuner_v6.h, as the example's nccl/tuner.h copies them. */
typedef void (*logger_t)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);
typedef struct {
  int nvl_domains, min_ranks_per_nvl_domain, max_ranks_per_nvl_domain;
} nvl_domain_info_t;
typedef struct {
  double base_latencies[kAlgorithms][kProtocols];
  double hw_latencies[kHwLinks][kAlgorithms][kProtocols];
  double ll_max_bws[kCompcaps][kScales];
  double per_ch_max_ring_ll128_bws[kCompcaps][kScales];
  double per_ch_max_tree_ll128_bws[kCompcaps][kScales];
  double per_ch_max_tree_bws[kCompcaps][kScales];
} tuner_constants_t;
/* v5, and the first members of v6 (which adds getChunkSize after finalize). */
typedef struct {
  const char* name;
  int (*init)(void** context, uint64_t comm_id, size_t ranks, size_t nodes, logger_t log,
              nvl_domain_info_t* nvl_domain_info, tuner_constants_t* constants);
  int (*get_coll_info)(void* context, int function, size_t bytes, int pipe_ops, float** cost_table,
                       int algorithms, int protocols, int registered, int* channels);
  int (*finalize)(void* context);
} tuner_t;

static const char* const kAlgorithmNames[kAlgorithms] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
static const char* const kProtocolNames[kProtocols] = {"ll", "ll128", "simple"};

static void log_line(int level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags, (void)file, (void)line;
  va_list args;
  va_start(args, fmt);
  fprintf(stderr, "[%d] ", level);
  vfprintf(stderr, fmt, args);
  va_end(args);
  fprintf(stderr, "\n");
}

/* The table as NCCL's stack holds it, with guard cells either side to catch a write out of it. */
typedef struct {
  float before[kGuards];
  float cost[kAlgorithms][kProtocols];
  float after[kGuards];
} cost_table_t;

static float initial_cost(int algorithm, int protocol) {
  return 10.0f + 3.0f * (float)algorithm + (float)protocol;
}

static void query(const tuner_t* tuner, void* context, int function, size_t bytes, int pipe_ops,
                  int registered) {
  cost_table_t table;
  for (int i = 0; i < kGuards; ++i) table.before[i] = table.after[i] = -7.0f;
  for (int a = 0; a < kAlgorithms; ++a)
    for (int p = 0; p < kProtocols; ++p) table.cost[a][p] = initial_cost(a, p);
  int channels = 0;
  printf("%d %zu: ", function, bytes);
  fflush(stdout);
  const int status = tuner->get_coll_info(context, function, bytes, pipe_ops, (float**)table.cost,
                                          kAlgorithms, kProtocols, registered, &channels);
  if (status != 0) {
    printf("bad getCollInfo returned %d\n", status);
    fflush(stdout);
    return;
  }
  int zeros = 0, other = 0, zero_algorithm = -1, zero_protocol = -1;
  for (int a = 0; a < kAlgorithms; ++a)
    for (int p = 0; p < kProtocols; ++p) {
      if (table.cost[a][p] == 0.0f) {
        ++zeros;
        zero_algorithm = a;
        zero_protocol = p;
      } else if (table.cost[a][p] != initial_cost(a, p)) {
        ++other;
      }
    }
  int guards = 0;
  for (int i = 0; i < kGuards; ++i) guards += (table.before[i] != -7.0f) + (table.after[i] != -7.0f);
  if (guards > 0 || other > 0 || zeros > 1)
    printf("bad %d guard cells written, %d cells set to 0.0, %d to another value channels %d\n", guards,
           zeros, other, channels);
  else if (zeros == 1)
    printf("%s %s channels %d\n", kAlgorithmNames[zero_algorithm], kProtocolNames[zero_protocol], channels);
  else
    printf("none channels %d\n", channels);
  fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: tuner_example_loader PLUGIN.so NODES RANKS < QUERIES\n");
    return 2;
  }
  const size_t nodes = strtoul(argv[2], NULL, 10), ranks = strtoul(argv[3], NULL, 10);
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (plugin == NULL) {
    printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  const char* symbol = "ncclTunerPlugin_v6";
  const tuner_t* tuner = (const tuner_t*)dlsym(plugin, symbol);
  if (tuner == NULL) {
    symbol = "ncclTunerPlugin_v5";
    tuner = (const tuner_t*)dlsym(plugin, symbol);
  }
  if (tuner == NULL) {
    printf("no ncclTunerPlugin_v6 nor _v5: %s\n", dlerror());
    return 1;
  }
  printf("plugin %s %s\n", tuner->name, symbol);
  nvl_domain_info_t domains = {(int)nodes, (int)(ranks / nodes), (int)(ranks / nodes)};
  tuner_constants_t constants;
  memset(&constants, 0, sizeof constants);
  void* context = NULL;
  const int status = tuner->init(&context, 0x1234, ranks, nodes, log_line, &domains, &constants);
  if (status != 0) {
    printf("init returned %d\n", status);
    return 1;
  }
  int function, pipe_ops, registered;
  size_t bytes;
  while (scanf("%d %zu %d %d", &function, &bytes, &pipe_ops, &registered) == 4)
    query(tuner, context, function, bytes, pipe_ops, registered);
  tuner->finalize(context);
  dlclose(plugin);
  return 0;
}
