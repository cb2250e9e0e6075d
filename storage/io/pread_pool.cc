#include "storage/io/pread_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>

namespace seer::internal {

struct PreadPool::Job {
  const std::function<bool(size_t)>* body = nullptr;
  size_t count = 0;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  // Guarded by done_mu.
  std::mutex done_mu;
  std::condition_variable done_cv;
  int tickets_left = 0;
  std::exception_ptr exception;
};

PreadPool::PreadPool(int num_threads) {
  num_threads = std::max(1, num_threads);
  num_workers_ = num_threads;
  workers_.reserve(static_cast<size_t>(num_threads));
  for (int i = 0; i < num_threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  // Return once every worker waits for work, so IdleWorkers() counts them from the start.
  std::unique_lock<std::mutex> lock(mu_);
  started_cv_.wait(lock, [&] { return idle_ == num_threads; });
}

PreadPool::~PreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

std::shared_ptr<PreadPool::Job> PreadPool::Submit(size_t count,
                                                  const std::function<bool(size_t)>& body,
                                                  int tickets) {
  auto job = std::make_shared<Job>();
  job->body = &body;
  job->count = count;
  job->tickets_left = tickets;
  if (tickets == 0) return job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < tickets; ++i) tickets_.push_back(job);
  }
  if (tickets == 1) {
    cv_.notify_one();
  } else {
    cv_.notify_all();
  }
  return job;
}

void PreadPool::ParallelFor(size_t count, const std::function<bool(size_t)>& body) {
  if (count == 0) return;
  const int tickets = static_cast<int>(std::min<size_t>(workers_.size(), count));
  std::shared_ptr<Job> job = Submit(count, body, tickets);
  std::unique_lock<std::mutex> lock(job->done_mu);
  job->done_cv.wait(lock, [&] { return job->tickets_left == 0; });
  if (job->exception) std::rethrow_exception(job->exception);
}

int PreadPool::IdleWorkers() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::max(0, idle_ - static_cast<int>(tickets_.size()));
}

void PreadPool::ParallelForWithCaller(size_t count, const std::function<bool(size_t)>& body) {
  if (count == 0) return;
  const int tickets = static_cast<int>(std::min<size_t>(workers_.size(), count - 1));
  std::shared_ptr<Job> job = Submit(count, body, tickets);
  std::exception_ptr exception = RunIndices(job.get());
  if (tickets > 0) {
    // Withdraw the tickets no worker has taken (a worker busy with another caller's job
    // would otherwise hold us up for nothing: every index is claimed already).
    int withdrawn = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = tickets_.begin(); it != tickets_.end();) {
        if (*it == job) {
          it = tickets_.erase(it);
          ++withdrawn;
        } else {
          ++it;
        }
      }
    }
    std::unique_lock<std::mutex> lock(job->done_mu);
    job->tickets_left -= withdrawn;
    job->done_cv.wait(lock, [&] { return job->tickets_left == 0; });
    if (!exception) exception = job->exception;
  }
  if (exception) std::rethrow_exception(exception);
}

std::exception_ptr PreadPool::RunIndices(Job* job) {
  try {
    while (!job->stop.load(std::memory_order_relaxed)) {
      const size_t i = job->next.fetch_add(1, std::memory_order_relaxed);
      if (i >= job->count) break;
      if (!(*job->body)(i)) job->stop.store(true, std::memory_order_relaxed);
    }
  } catch (...) {
    job->stop.store(true, std::memory_order_relaxed);
    return std::current_exception();
  }
  return nullptr;
}

void PreadPool::WorkerLoop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (++idle_ == num_workers_) started_cv_.notify_all();
      cv_.wait(lock, [this] { return shutting_down_ || !tickets_.empty(); });
      --idle_;
      if (tickets_.empty()) return;  // shutting down with nothing queued
      job = std::move(tickets_.front());
      tickets_.pop_front();
    }
    const std::exception_ptr exception = RunIndices(job.get());
    std::lock_guard<std::mutex> lock(job->done_mu);
    if (exception && !job->exception) job->exception = exception;
    if (--job->tickets_left == 0) job->done_cv.notify_all();
  }
}

}  // namespace seer::internal
