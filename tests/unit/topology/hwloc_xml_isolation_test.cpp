// read_hwloc_xml loads an XML from outside in the nccltune-hwloc-xml helper: what the helper
// answers comes back whole, and a helper that crashes becomes one message naming the file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "test_files.h"
#include "topology/sources/hwloc_source.h"

using namespace nccltune;
using namespace nccltune::test_support;

namespace {

// Points read_hwloc_xml at another helper for the life of the object.
class HelperOverride {
 public:
  explicit HelperOverride(const std::string& path) {
    if (const char* old = std::getenv("NCCLTUNE_HWLOC_READER")) old_ = old;
    ::setenv("NCCLTUNE_HWLOC_READER", path.c_str(), 1);
  }
  ~HelperOverride() { ::setenv("NCCLTUNE_HWLOC_READER", old_.c_str(), 1); }

 private:
  std::string old_;
};

}  // namespace

TEST(HwlocXmlIsolation, TheHelperReadsASnapshotsXml) {
  const Result<PciInventory> inventory = read_hwloc_xml(fixture("nodes/dgx-h100/hwloc.xml"));
  ASSERT_TRUE(inventory) << inventory.error();
  EXPECT_EQ(inventory->gpus.size(), 8u);
  ASSERT_FALSE(inventory->nics.empty());
  EXPECT_FALSE(inventory->nics.front().openfabrics.empty());
  EXPECT_FALSE(inventory->gpus.front().placement.bridges.empty());
  EXPECT_FALSE(inventory->hwloc_version.empty());
}

TEST(HwlocXmlIsolation, ItsErrorsNameTheFile) {
  TempDir dir;
  write_file(dir / "not.xml", "<topology><object type=\"Machine\"");
  const Result<PciInventory> broken = read_hwloc_xml(dir / "not.xml");
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().rfind((dir / "not.xml").string() + ": hwloc", 0), 0u) << broken.error();
  ASSERT_EQ(::mkfifo((dir / "fifo.xml").c_str(), 0600), 0);
  const Result<PciInventory> fifo = read_hwloc_xml(dir / "fifo.xml");
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error(), (dir / "fifo.xml").string() + ": is a FIFO, not a regular file");
}

TEST(HwlocXmlIsolation, AHelperThatCrashesIsOneMessageNotACrash) {
  TempDir dir;
  write_file(dir / "segv.sh", "#!/bin/sh\nkill -SEGV $$\n");
  ::chmod((dir / "segv.sh").c_str(), 0755);
  const HelperOverride crashing((dir / "segv.sh").string());
  const Result<PciInventory> inventory = read_hwloc_xml(fixture("nodes/dgx-h100/hwloc.xml"));
  ASSERT_FALSE(inventory);
  EXPECT_EQ(inventory.error(),
            fixture("nodes/dgx-h100/hwloc.xml").string() +
                ": hwloc crashed reading it (killed by signal 11 (Segmentation fault)); it "
                "is damaged or not an hwloc XML export");
}

TEST(HwlocXmlIsolation, AMissingHelperIsOneMessage) {
  const HelperOverride missing("/nonexistent/nccltune-hwloc-xml");
  const Result<PciInventory> inventory = read_hwloc_xml(fixture("nodes/dgx-h100/hwloc.xml"));
  ASSERT_FALSE(inventory);
  EXPECT_NE(inventory.error().find(": cannot start /nonexistent/nccltune-hwloc-xml to read it"),
            std::string::npos)
      << inventory.error();
}
