// StrictModes for the profile store: owner root or the caller, no group or other write bit on the
// profile or any directory up to the store root, directories above it up to / safe (sticky when
// writable by others), a regular file inside the store, read through the descriptor checked.
#include "profile/store_permissions.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

struct stat with(uid_t owner, mode_t mode) {
  struct stat info {};
  info.st_uid = owner;
  info.st_mode = S_IFREG | mode;
  return info;
}

class StorePermissions : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(store_ / "key");
    ::chmod(store_.c_str(), 0755);
    ::chmod((store_ / "key").c_str(), 0755);
    profile_ = store_ / "key" / "2n.yaml";
    write_file(profile_, "schema: nccltune/profile/v1\n");
    ::chmod(profile_.c_str(), 0644);
  }

  std::string refusal(const std::filesystem::path& file, uid_t caller = ::geteuid()) {
    const auto trusted = read_trusted_file(store_, file, caller, kMaxBytes);
    EXPECT_FALSE(trusted.ok()) << "trusted: " << file;
    return trusted.ok() ? std::string() : trusted.error();
  }
  Result<std::filesystem::path> trusted(const std::filesystem::path& file, uid_t caller = ::geteuid()) {
    auto read = read_trusted_file(store_, file, caller, kMaxBytes);
    if (!read) return Error{read.error()};
    return read->real;
  }

  static constexpr std::size_t kMaxBytes = 4096;

  const TempDir scratch_{"nccltune-perm"};
  const std::filesystem::path store_ = scratch_.path();
  std::filesystem::path profile_;
};

}  // namespace

TEST(OwnershipProblem, RootOrCallerWithoutGroupOrOtherWrite) {
  EXPECT_FALSE(ownership_problem(with(0, 0644), 1000).has_value());
  EXPECT_FALSE(ownership_problem(with(1000, 0600), 1000).has_value());
  EXPECT_FALSE(ownership_problem(with(0, 0755), 0).has_value());
  const auto foreign = ownership_problem(with(1001, 0644), 1000);
  ASSERT_TRUE(foreign.has_value());
  EXPECT_NE(foreign->find("uid 1001"), std::string::npos) << *foreign;
  const auto group = ownership_problem(with(0, 0664), 1000);
  ASSERT_TRUE(group.has_value());
  EXPECT_NE(group->find("0664"), std::string::npos) << *group;
  EXPECT_TRUE(ownership_problem(with(1000, 0646), 1000).has_value());
  EXPECT_TRUE(ownership_problem(with(0, 0777), 0).has_value());
  EXPECT_TRUE(ownership_problem(with(1000, 0644), 0).has_value());  // root does not trust users' files
}

TEST_F(StorePermissions, PlainStoreIsTrusted) {
  const auto read = read_trusted_file(store_, profile_, ::geteuid(), kMaxBytes);
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ(read->real, std::filesystem::canonical(profile_));
  EXPECT_EQ(read->text, "schema: nccltune/profile/v1\n");
}

TEST_F(StorePermissions, WritableByOthersAnywhereIsRefused) {
  ::chmod(profile_.c_str(), 0664);
  EXPECT_NE(refusal(profile_).find("2n.yaml"), std::string::npos);
  ::chmod(profile_.c_str(), 0644);

  ::chmod((store_ / "key").c_str(), 0757);
  EXPECT_NE(refusal(profile_).find("writable by group or others"), std::string::npos);
  ::chmod((store_ / "key").c_str(), 0755);

  ::chmod(store_.c_str(), 0775);
  EXPECT_NE(refusal(profile_).find(store_.filename().string()), std::string::npos);
  ::chmod(store_.c_str(), 0755);
  EXPECT_TRUE(trusted(profile_).ok());
}

TEST_F(StorePermissions, OwnerMustBeRootOrTheCaller) {
  // The profile belongs to `owner`, the directories to us. As root, give the profile away;
  // otherwise it is ours already.
  uid_t owner = ::geteuid();
  if (owner == 0) {
    owner = 4242;
    ASSERT_EQ(::chown(profile_.c_str(), owner, static_cast<gid_t>(-1)), 0);
  }
  const uid_t stranger = owner + 1;
  if (::geteuid() == 0) {
    const std::string error = refusal(profile_, 0);  // root does not trust a user's profile
    EXPECT_NE(error.find("uid 4242"), std::string::npos) << error;
  }
  EXPECT_FALSE(trusted(profile_, stranger).ok());
  const auto own = trusted(profile_, owner);  // its owner may read it
  EXPECT_TRUE(own.ok()) << own.error();
}

TEST_F(StorePermissions, SymlinksMustStayInsideTheStore) {
  {
    const TempDir elsewhere("nccltune-outside");
    const auto outside = elsewhere / "outside.yaml";
    write_file(outside, "schema: nccltune/profile/v1\n");
    ::chmod(outside.c_str(), 0644);
    std::filesystem::create_symlink(outside, store_ / "key" / "4n.yaml");
    EXPECT_NE(refusal(store_ / "key" / "4n.yaml").find("outside the profile store"), std::string::npos);
  }

  std::filesystem::create_symlink("2n.yaml", store_ / "key" / "8n.yaml");  // an alias inside: fine
  const auto alias = trusted(store_ / "key" / "8n.yaml");
  ASSERT_TRUE(alias.ok()) << alias.error();
  EXPECT_EQ(*alias, std::filesystem::canonical(profile_));

  std::filesystem::create_symlink("/etc", store_ / "etc-key");
  refusal(store_ / "etc-key" / "passwd");
  std::filesystem::create_symlink("missing.yaml", store_ / "key" / "16n.yaml");
  refusal(store_ / "key" / "16n.yaml");
}

TEST_F(StorePermissions, OnlyRegularFiles) {
  // Opened O_NONBLOCK, then refused by fstat: a FIFO without a writer would otherwise hang open().
  const auto fifo = store_ / "key" / "4n.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_NE(refusal(fifo).find("not a regular file"), std::string::npos);
  std::filesystem::create_directories(store_ / "key" / "8n.yaml");
  refusal(store_ / "key" / "8n.yaml");
}

TEST(AncestorProblem, StickyWhenWritableByOthers) {
  const struct stat root_dir = with(0, 0755), user_dir = with(1000, 0755), stranger_dir = with(1001, 0755);
  EXPECT_FALSE(ancestor_problem(root_dir, user_dir, 1000).has_value());
  EXPECT_FALSE(ancestor_problem(with(0, 01777), user_dir, 1000).has_value());  // /tmp
  EXPECT_FALSE(ancestor_problem(with(0, 01777), root_dir, 1000).has_value());
  const auto plain = ancestor_problem(with(0, 0777), user_dir, 1000);
  ASSERT_TRUE(plain.has_value());
  EXPECT_NE(plain->find("without the sticky bit (mode 0777)"), std::string::npos) << *plain;
  EXPECT_TRUE(ancestor_problem(with(0, 0775), root_dir, 0).has_value());
  const auto foreign_child = ancestor_problem(with(0, 01777), stranger_dir, 1000);
  ASSERT_TRUE(foreign_child.has_value());
  EXPECT_NE(foreign_child->find("uid 1001"), std::string::npos) << *foreign_child;
  EXPECT_TRUE(ancestor_problem(with(1001, 0755), root_dir, 1000).has_value());
}

class StoreAncestors : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = above_ / "mid" / "store";
    std::filesystem::create_directories(store_ / "key");
    for (const auto& directory : {above_, above_ / "mid", store_, store_ / "key"})
      ::chmod(directory.c_str(), 0755);
    profile_ = store_ / "key" / "2n.yaml";
    write_file(profile_, "schema: nccltune/profile/v1\n");
    ::chmod(profile_.c_str(), 0644);
  }
  Result<TrustedFile> read() const { return read_trusted_file(store_, profile_, ::geteuid(), 4096); }

  const TempDir scratch_{"nccltune-above"};
  const std::filesystem::path above_ = scratch_.path();
  std::filesystem::path store_, profile_;
};

TEST_F(StoreAncestors, EveryDirectoryUpToTheRootIsChecked) {
  ASSERT_TRUE(read().ok()) << read().error();  // /tmp itself is 1777 and root's: fine

  ::chmod(above_.c_str(), 0777);  // two levels above the store, anyone could swap mid/
  ASSERT_FALSE(read().ok());
  EXPECT_NE(read().error().find(above_.string() + ": directory above the profile store"), std::string::npos)
      << read().error();
  ::chmod(above_.c_str(), 01777);  // sticky, and mid/ is root's or ours: nobody else can rename it
  EXPECT_TRUE(read().ok()) << read().error();

  ::chmod((above_ / "mid").c_str(), 0775);
  ASSERT_FALSE(read().ok());
  EXPECT_NE(read().error().find("/mid: directory above the profile store is writable by group or others"),
            std::string::npos)
      << read().error();
  ::chmod((above_ / "mid").c_str(), 0755);
  EXPECT_TRUE(read().ok()) << read().error();

  if (::geteuid() == 0) {  // an ancestor owned by someone else
    ASSERT_EQ(::chown((above_ / "mid").c_str(), 4242, static_cast<gid_t>(-1)), 0);
    ASSERT_FALSE(read().ok());
    EXPECT_NE(read().error().find("owned by uid 4242"), std::string::npos) << read().error();
  }
}

TEST_F(StorePermissions, ReadsWhatItCheckedAndNoMore) {
  write_file(profile_, std::string(kMaxBytes, 'a'));
  const auto full = read_trusted_file(store_, profile_, ::geteuid(), kMaxBytes);
  ASSERT_TRUE(full.ok()) << full.error();
  EXPECT_EQ(full->text.size(), kMaxBytes);
  std::ofstream(profile_, std::ios::app) << "b";
  EXPECT_NE(refusal(profile_).find("4097 bytes, more than the 4096"), std::string::npos) << refusal(profile_);
  write_file(profile_, "");
  const auto empty = read_trusted_file(store_, profile_, ::geteuid(), kMaxBytes);
  ASSERT_TRUE(empty.ok()) << empty.error();
  EXPECT_EQ(empty->text, "");
}
