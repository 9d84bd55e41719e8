// For each plugin library: the libstdc++ linked in (CMakeLists.txt) allocates its emergency
// exception pool (71 KiB) when the plugin loads and never frees it. NCCL dlcloses a plugin (the
// tuner plugin with its last communicator) and loads it again later, so each cycle would leak
// one pool (LeakSanitizer found it). __freeres is libstdc++'s own hook for freeing it (valgrind
// calls it); this is the plugin's private copy, so it frees the plugin's pool only.
namespace __gnu_cxx {
void __freeres() __attribute__((weak));
}
__attribute__((destructor)) static void free_exception_pool() {
  if (__gnu_cxx::__freeres != nullptr) __gnu_cxx::__freeres();
}
