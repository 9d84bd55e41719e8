// Byte sizes as nccl-tests writes them on its command line (tuner/byte_size.h).
#include "base/byte_size.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <limits>
#include <string>

using namespace nccltune;

namespace {

std::size_t parsed(const std::string& text) {
  Result<std::size_t> size = parse_byte_size(text);
  EXPECT_TRUE(size.ok()) << text << ": " << size.error();
  return size.ok() ? *size : 0;
}

}  // namespace

TEST(ByteSize, PlainAndSuffixed) {
  EXPECT_EQ(parsed("8"), 8u);
  EXPECT_EQ(parsed("0"), 0u);
  EXPECT_EQ(parsed("1000"), 1000u);
  EXPECT_EQ(parsed("64K"), 64u * 1024);
  EXPECT_EQ(parsed("1M"), 1024u * 1024);
  EXPECT_EQ(parsed("1G"), std::size_t{1} << 30);
  EXPECT_EQ(parsed("16G"), std::size_t{16} << 30);
  EXPECT_EQ(parsed("2T"), std::size_t{2} << 40);
}

TEST(ByteSize, SuffixCaseAndTrailingB) {
  EXPECT_EQ(parsed("64k"), 64u * 1024);
  EXPECT_EQ(parsed("1m"), 1024u * 1024);
  EXPECT_EQ(parsed("1g"), std::size_t{1} << 30);
  EXPECT_EQ(parsed("1MB"), 1024u * 1024);
  EXPECT_EQ(parsed("1Gb"), std::size_t{1} << 30);
}

TEST(ByteSize, BadSuffix) {
  for (const char* text : {"8X", "1P", "64KiB", "1MM", "1 M", "1M ", "1.5M", "12Kq"}) {
    Result<std::size_t> size = parse_byte_size(text);
    EXPECT_FALSE(size.ok()) << text << " parsed as " << (size.ok() ? *size : 0);
    if (!size.ok()) {
      EXPECT_NE(size.error().find(text), std::string::npos) << "error names the text: " << size.error();
    }
  }
  Result<std::size_t> unknown = parse_byte_size("8X");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().find("suffix"), std::string::npos) << unknown.error();
}

TEST(ByteSize, NotANumber) {
  for (const char* text : {"", "M", "K8", "-8", "+8", "abc", " 8"}) {
    EXPECT_FALSE(parse_byte_size(text).ok()) << "'" << text << "'";
  }
}

TEST(ByteSize, Overflow) {
  // 2^64 and more do not fit; neither does a suffix that pushes past it.
  EXPECT_FALSE(parse_byte_size("18446744073709551616").ok());
  EXPECT_FALSE(parse_byte_size("99999999999999999999999").ok());
  Result<std::size_t> scaled = parse_byte_size("17179869184G");  // 2^34 G = 2^64
  ASSERT_FALSE(scaled.ok());
  EXPECT_NE(scaled.error().find("too large"), std::string::npos) << scaled.error();
  EXPECT_FALSE(parse_byte_size("16777216T").ok());  // 2^24 T = 2^64
  // The largest values that fit are accepted.
  EXPECT_EQ(parsed("18446744073709551615"), std::numeric_limits<std::size_t>::max());
  EXPECT_EQ(parsed("17179869183G"), (std::size_t{17179869183}) << 30);
}

TEST(ByteSize, Format) {
  EXPECT_EQ(format_byte_size(8), "8");
  EXPECT_EQ(format_byte_size(0), "0");
  EXPECT_EQ(format_byte_size(1000), "1000");
  EXPECT_EQ(format_byte_size(1536), "1536");
  EXPECT_EQ(format_byte_size(64u * 1024), "64K");
  EXPECT_EQ(format_byte_size(1024u * 1024), "1M");
  EXPECT_EQ(format_byte_size(std::size_t{64} << 20), "64M");
  EXPECT_EQ(format_byte_size(std::size_t{1} << 30), "1G");
  EXPECT_EQ(format_byte_size(std::size_t{1} << 40), "1T");
  EXPECT_EQ(format_byte_size(std::size_t{1} << 50), "1024T");
}

TEST(ByteSize, FormatParsesBack) {
  for (std::size_t size : {std::size_t{8}, std::size_t{1000}, std::size_t{65536}, std::size_t{3} << 20,
                           std::size_t{1} << 30, std::size_t{5} << 40, std::size_t{1} << 50}) {
    EXPECT_EQ(parsed(format_byte_size(size)), size) << format_byte_size(size);
  }
}
