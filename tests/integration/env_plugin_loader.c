/* Loads the NCCL env plugin as NCCL 2.28.9 does (dlopen with RTLD_NOW | RTLD_LOCAL, then the v2
   table by name), calls init with the NCCL version given and a logger, then getEnv for each name,
   as NCCL reads its variables. A C program that links only the C library, so the plugin must bring
   everything else it needs. Prints the plugin's log lines, then "NAME=value" or "NAME unset" per
   name; exits with init's result (0: NCCL's init goes on).
   usage: env_plugin_loader PLUGIN.so MAJOR MINOR [NAME...] */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*logger_t)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);
typedef struct {
  const char* name;
  int (*init)(uint8_t major, uint8_t minor, uint8_t patch, const char* suffix, logger_t log);
  int (*finalize)(void);
  const char* (*get_env)(const char* name);
} env_v2_t;

static void log_line(int level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags, (void)file, (void)line;
  va_list args;
  va_start(args, fmt);
  printf("%s ", level == 2 ? "WARN" : "INFO");
  vprintf(fmt, args);
  va_end(args);
  printf("\n");
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: env_plugin_loader PLUGIN.so MAJOR MINOR [NAME...]\n");
    return 2;
  }
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (plugin == NULL) {
    printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  const env_v2_t* env = (const env_v2_t*)dlsym(plugin, "ncclEnvPlugin_v2");
  if (env == NULL) {
    printf("no ncclEnvPlugin_v2: %s\n", dlerror());
    return 1;
  }
  const int result = env->init((uint8_t)atoi(argv[2]), (uint8_t)atoi(argv[3]), 9, "", log_line);
  for (int i = 4; i < argc; ++i) {
    const char* value = env->get_env(argv[i]);
    if (value != NULL)
      printf("%s=%s\n", argv[i], value);
    else
      printf("%s unset\n", argv[i]);
  }
  env->finalize();
  dlclose(plugin);
  return result;
}
