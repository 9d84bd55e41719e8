/* What the plugin's statically linked runtime asks of glibc beyond what framework containers have
   (Ubuntu 22.04, RHEL 9: glibc 2.34) or beyond what a shared object may ask, supplied here, inside
   the plugin, hidden (the version script exports nothing else):

   - __libc_single_threaded (GLIBC_2.32): Debian's libyaml-cpp.a is compiled without -fPIC and
     reads this libstdc++ shortcut with a PC-relative load, which a shared object cannot resolve
     against libc.so. This copy stays 0, "more than one thread may run", which is always correct:
     reference counts then always use atomic instructions.
   - _dl_find_object (GLIBC_2.35): GCC 12's static unwinder (libgcc_eh) looks up a frame's
     exception data with it. This one finds it with dl_iterate_phdr (glibc 2.2.4), as libgcc
     itself did before 2.35: the loaded object whose PT_LOAD segment holds the address, and its
     PT_GNU_EH_FRAME (.eh_frame_hdr). The unwinder runs only for exceptions thrown and caught
     inside the plugin: every entry point catches everything. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;

struct lookup {
  uintptr_t pc;
  struct dl_find_object* result;
  int found;
};

static int find_object(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct lookup* lookup = data;
  uintptr_t start = UINTPTR_MAX, end = 0;
  int holds_pc = 0;
  const void* eh_frame = NULL;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* segment = &info->dlpi_phdr[i];
    const uintptr_t from = info->dlpi_addr + segment->p_vaddr;
    if (segment->p_type == PT_LOAD) {
      const uintptr_t to = from + segment->p_memsz;
      if (from < start) start = from;
      if (to > end) end = to;
      if (lookup->pc >= from && lookup->pc < to) holds_pc = 1;
    } else if (segment->p_type == PT_GNU_EH_FRAME) {
      eh_frame = (const void*)from;
    }
  }
  if (!holds_pc) return 0;
  memset(lookup->result, 0, sizeof *lookup->result);
  lookup->result->dlfo_map_start = (void*)start;
  lookup->result->dlfo_map_end = (void*)end;
  lookup->result->dlfo_eh_frame = (void*)eh_frame;
  lookup->found = 1;
  return 1;
}

__attribute__((visibility("hidden"))) int _dl_find_object(void* pc, struct dl_find_object* result) {
  struct lookup lookup = {(uintptr_t)pc, result, 0};
  dl_iterate_phdr(find_object, &lookup);
  return lookup.found ? 0 : -1;
}
