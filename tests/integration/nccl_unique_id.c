/* The smallest NCCL call that reads NCCL's environment without a GPU: ncclGetUniqueId (ncclInit:
   the env plugin, then the bootstrap network, which reads NCCL_SOCKET_IFNAME and
   NCCL_SOCKET_FAMILY). Loads the libnccl.so.2 given, prints its version and the call's result.
   usage: nccl_unique_id LIBNCCL.so */
#include <dlfcn.h>
#include <stdio.h>

typedef struct {
  char internal[128];
} unique_id_t;

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: nccl_unique_id LIBNCCL.so\n");
    return 2;
  }
  void* nccl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (nccl == NULL) {
    printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  int (*get_version)(int*) = (int (*)(int*))dlsym(nccl, "ncclGetVersion");
  int (*get_unique_id)(unique_id_t*) = (int (*)(unique_id_t*))dlsym(nccl, "ncclGetUniqueId");
  if (get_version == NULL || get_unique_id == NULL) {
    printf("not an NCCL: %s\n", argv[1]);
    return 1;
  }
  int version = 0;
  get_version(&version);
  unique_id_t id;
  const int result = get_unique_id(&id);
  printf("version %d\nncclGetUniqueId %d\n", version, result);
  return result;
}
