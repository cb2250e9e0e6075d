// Status and Result<T> (storage/base/status.h): the errno helper names operation, path
// and byte range; Result carries a value or an error.
#include "storage/base/status.h"

#include <cerrno>
#include <string>

#include <gtest/gtest.h>

namespace seer {
namespace {

TEST(StatusTest, ErrnoStatusNamesOperationPathAndRange) {
  Status st = ErrnoStatus(-EIO, "read", "/data/features.bin", 4096, 512);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_EQ(st.sys_errno(), EIO);
  EXPECT_NE(st.message().find("read /data/features.bin at offset 4096 (+512 bytes)"),
            std::string::npos) << st.message();
  EXPECT_EQ(ErrnoStatus(ENOENT, "open", "x").code(), StatusCode::kNotFound);
}

TEST(StatusTest, ResultCarriesValueOrError) {
  Result<int> good(7);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 7);
  Result<int> bad(InvalidArgument("nope"));
  EXPECT_FALSE(bad.ok());
  EXPECT_THROW(bad.value(), StatusError);
}

}  // namespace
}  // namespace seer
