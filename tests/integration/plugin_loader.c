/* Loads the NCCL tuner plugin as NCCL does (dlopen with RTLD_NOW | RTLD_LOCAL, then the v4 table by
   name), initialises one communicator of 16 ranks on 2 nodes and asks for the choice of a 1 KiB
   all_reduce. A C program that links only the C library, so the plugin must bring everything else
   it needs. Prints the plugin's log lines and "cell ALGO PROTO" of the cell it marked cheapest.
   The profile comes from NCCLTUNE_PROFILE, as in a job.
   usage: plugin_loader PLUGIN.so */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

typedef void (*logger_t)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);
typedef struct {
  const char* name;
  int (*init)(size_t ranks, size_t nodes, logger_t log, void** context);
  int (*get_coll_info)(void* context, int collective, size_t bytes, int pipe_ops, float** cost_table,
                       int algos, int protos, int registered, int* channels);
  int (*destroy)(void* context);
} tuner_v4_t;

static void log_line(int level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)level, (void)flags, (void)file, (void)line;
  va_list args;
  va_start(args, fmt);
  vprintf(fmt, args);
  va_end(args);
  printf("\n");
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: plugin_loader PLUGIN.so\n");
    return 2;
  }
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (plugin == NULL) {
    printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  const tuner_v4_t* tuner = (const tuner_v4_t*)dlsym(plugin, "ncclTunerPlugin_v4");
  if (tuner == NULL) {
    printf("no ncclTunerPlugin_v4: %s\n", dlerror());
    return 1;
  }
  void* context = NULL;
  if (tuner->init(16, 2, log_line, &context) != 0) return 1;
  float costs[7][3];
  for (int a = 0; a < 7; ++a)
    for (int p = 0; p < 3; ++p) costs[a][p] = 100.0f;
  int channels = 0;
  if (tuner->get_coll_info(context, 4 /* all_reduce */, 1024, 1, (float**)costs, 7, 3, 0, &channels) != 0)
    return 1;
  for (int a = 0; a < 7; ++a)
    for (int p = 0; p < 3; ++p)
      if (costs[a][p] == 0.0f) printf("cell %d %d\n", a, p);
  tuner->destroy(context);
  dlclose(plugin);
  return 0;
}
