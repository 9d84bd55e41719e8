// The node type key of THIS node without MPI or a worker process, for nccltuned and
// `nccltune env`: the topology (live or `--from`), NCCL's version from ncclGetVersion and the CUDA
// driver's from cuDriverGetVersion (both by dlopen; neither needs a GPU), then node_type() and
// node_type_key(), so the key equals what `tune` writes for the same node.
#pragma once

#include <string>
#include <vector>

#include "cluster_shape.h"
#include "node_topology.h"
#include "result.h"

namespace nccltune {

struct LocalLibraries {
  std::string nccl_lib = "libnccl.so.2", cuda_lib = "libcuda.so.1";
};

// Which file a library was loaded from, and that file's identity (device, inode, size, mtime),
// so a package upgrade that replaces or rewrites it is noticed without loading it again.
struct LibraryFile {
  std::string path;   // as the dynamic loader found it; empty when it could not be loaded
  std::string stamp;  // "dev:inode:size:mtime_ns"; empty when the file cannot be stat()ed
  friend bool operator==(const LibraryFile&, const LibraryFile&) = default;
};

// Versions as `tune` writes them ("2.28.9", "13.0"); empty when a library cannot be loaded or
// answer, with one note per failure.
struct LibraryVersions {
  std::string nccl, cuda_driver;
  std::vector<std::string> notes;
  LibraryFile nccl_file, cuda_file;
};
LibraryVersions read_library_versions(const LocalLibraries& libs);

// True when a library was not loaded when `versions` were read, or its file has changed since
// (one stat() per library): then read_library_versions again.
bool library_files_changed(const LibraryVersions& versions);

// Pure: the node type from a topology and known versions (the GPU count from the topology).
NodeType local_node_type(const NodeTopology& topology, const LibraryVersions& versions);

// Both steps. A missing library degrades the type (empty version) rather than failing.
Result<NodeType> local_node_type(const NodeTopology& topology, const LocalLibraries& libs);

// 13000 -> "13.0", 12040 -> "12.4" (cuDriverGetVersion's 1000*major + 10*minor); "" for <= 0.
std::string cuda_driver_version_string(int code);

}  // namespace nccltune
