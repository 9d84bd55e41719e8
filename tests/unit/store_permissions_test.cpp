// StrictModes for the profile store: owner root or the caller, no group or other write bit on the
// profile or any directory up to the store root, a regular file inside the store.
#include "store_permissions.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace nccltune;

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
    store_ = std::filesystem::temp_directory_path() / ("nccltune-perm-" + std::to_string(::getpid()));
    std::filesystem::remove_all(store_);
    std::filesystem::create_directories(store_ / "key");
    ::chmod(store_.c_str(), 0755);
    ::chmod((store_ / "key").c_str(), 0755);
    profile_ = store_ / "key" / "2n.yaml";
    std::ofstream(profile_) << "schema: nccltune/profile/v1\n";
    ::chmod(profile_.c_str(), 0644);
  }
  void TearDown() override { std::filesystem::remove_all(store_); }

  std::string refusal(const std::filesystem::path& file, uid_t caller = ::geteuid()) {
    const auto trusted = trusted_profile_path(store_, file, caller);
    EXPECT_FALSE(trusted.ok()) << "trusted: " << file;
    return trusted.ok() ? std::string() : trusted.error();
  }

  std::filesystem::path store_, profile_;
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
  const auto trusted = trusted_profile_path(store_, profile_, ::geteuid());
  ASSERT_TRUE(trusted.ok()) << trusted.error();
  EXPECT_EQ(*trusted, std::filesystem::canonical(profile_));
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
  EXPECT_TRUE(trusted_profile_path(store_, profile_, ::geteuid()).ok());
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
  EXPECT_FALSE(trusted_profile_path(store_, profile_, stranger).ok());
  const auto own = trusted_profile_path(store_, profile_, owner);  // its owner may read it
  EXPECT_TRUE(own.ok()) << own.error();
}

TEST_F(StorePermissions, SymlinksMustStayInsideTheStore) {
  const auto outside = store_.parent_path() / ("nccltune-outside-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(outside) << "schema: nccltune/profile/v1\n";
  ::chmod(outside.c_str(), 0644);
  std::filesystem::create_symlink(outside, store_ / "key" / "4n.yaml");
  EXPECT_NE(refusal(store_ / "key" / "4n.yaml").find("outside the profile store"), std::string::npos);
  std::filesystem::remove(outside);

  std::filesystem::create_symlink("2n.yaml", store_ / "key" / "8n.yaml");  // an alias inside: fine
  const auto alias = trusted_profile_path(store_, store_ / "key" / "8n.yaml", ::geteuid());
  ASSERT_TRUE(alias.ok()) << alias.error();
  EXPECT_EQ(*alias, std::filesystem::canonical(profile_));

  std::filesystem::create_symlink("/etc", store_ / "etc-key");
  refusal(store_ / "etc-key" / "passwd");
  std::filesystem::create_symlink("missing.yaml", store_ / "key" / "16n.yaml");
  refusal(store_ / "key" / "16n.yaml");
}

TEST_F(StorePermissions, OnlyRegularFiles) {
  const auto fifo = store_ / "key" / "4n.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_NE(refusal(fifo).find("not a regular file"), std::string::npos);
  std::filesystem::create_directories(store_ / "key" / "8n.yaml");
  refusal(store_ / "key" / "8n.yaml");
}
