// PreadPool (storage/io/pread_pool.h): the worker pool behind the pread fallback, and the
// caller-participating variant the io_uring ring split uses.
#include "storage/io/pread_pool.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace seer {
namespace {

TEST(PreadPoolTest, CallerRunsEveryIndexWhenWorkersAreBusy) {
  internal::PreadPool pool(1);
  std::mutex mu;
  std::condition_variable cv;
  bool busy = false;
  bool release = false;
  std::thread other([&] {
    pool.ParallelFor(1, [&](size_t) {
      std::unique_lock<std::mutex> lock(mu);
      busy = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
      return true;
    });
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return busy; });
  }
  EXPECT_EQ(pool.IdleWorkers(), 0);
  // The only worker is blocked in another job: the caller must not wait for it.
  std::vector<int> ran(5, 0);
  const std::thread::id caller = std::this_thread::get_id();
  pool.ParallelForWithCaller(ran.size(), [&](size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    ++ran[i];
    return true;
  });
  EXPECT_EQ(ran, std::vector<int>(5, 1));
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  other.join();
}

TEST(PreadPoolTest, CallerVariantRunsEachIndexOnceAndRethrows) {
  internal::PreadPool pool(3);
  EXPECT_EQ(pool.IdleWorkers(), 3);  // all workers started when the constructor returns
  std::vector<std::atomic<int>> ran(1000);
  pool.ParallelForWithCaller(ran.size(), [&](size_t i) {
    ran[i].fetch_add(1);
    return true;
  });
  for (size_t i = 0; i < ran.size(); ++i) ASSERT_EQ(ran[i].load(), 1) << "index " << i;
  pool.ParallelForWithCaller(0, [](size_t) -> bool { throw std::logic_error("never"); });
  EXPECT_THROW(pool.ParallelForWithCaller(50,
                                          [](size_t i) -> bool {
                                            if (i == 7) throw std::runtime_error("body");
                                            return true;
                                          }),
               std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int> count{0};
  pool.ParallelForWithCaller(10, [&](size_t) {
    ++count;
    return true;
  });
  EXPECT_EQ(count.load(), 10);
}

}  // namespace
}  // namespace seer
