#include "storage/base/scratch_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "storage/base/file_io.h"
#include "storage/base/parse_number.h"

namespace seer {
namespace {

bool ValidPurpose(std::string_view purpose) {
  if (purpose.empty() || purpose.front() == '-' || purpose.back() == '-') return false;
  for (char c : purpose) {
    if (!((c >= 'a' && c <= 'z') || c == '-')) return false;
  }
  return true;
}

std::string HostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) return "?";
  return host;
}

}  // namespace

Result<ScratchDir> ScratchDir::Create(const std::string& parent, std::string_view purpose) {
  if (!ValidPurpose(purpose)) {
    return Status(StatusCode::kInvalidArgument, fmt::format("scratch directory purpose '{}' is not [a-z-]", purpose));
  }
  std::string pattern =
      fmt::format("{}/.seer-{}-{}-XXXXXX", parent.empty() ? std::string(".") : parent, purpose, ::getpid());
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) return ErrnoStatus(errno, "create scratch directory", pattern);
  std::string path(buf.data());
  // The mark is made under another name, locked and filled, and only then renamed to
  // kScratchOwnerMark: the sweep opens only that name, so it never sees the mark of a live
  // owner unlocked (a process stopped between creating and locking it would otherwise
  // look abandoned from another PID namespace). A process killed before the rename
  // leaves a directory without a mark, which the sweep keeps: it is not provably ours.
  const std::string new_mark_path = path + "/" + kScratchOwnerMark + ".new";
  const std::string mark_path = path + "/" + kScratchOwnerMark;
  auto mark = UniqueFd::Open(new_mark_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (!mark.ok()) {
    ::rmdir(path.c_str());
    return mark.status();
  }
  auto fail = [&](int err, const char* what, const std::string& where) {
    ::unlink(new_mark_path.c_str());
    ::unlink(mark_path.c_str());
    ::rmdir(path.c_str());
    return ErrnoStatus(err, what, where);
  };
  if (::flock(mark->get(), LOCK_EX | LOCK_NB) != 0) return fail(errno, "lock scratch directory mark", new_mark_path);
  const std::string owner = fmt::format("pid {} host {}\n", ::getpid(), HostName());
  if (::write(mark->get(), owner.data(), owner.size()) < 0) return fail(errno, "write", new_mark_path);
  if (::rename(new_mark_path.c_str(), mark_path.c_str()) != 0) return fail(errno, "rename", new_mark_path);
  return ScratchDir(std::move(path), std::move(mark).value());
}

ScratchDir::ScratchDir(ScratchDir&& other) noexcept
    : path_(std::exchange(other.path_, std::string())),
      mark_(std::move(other.mark_)),
      next_file_(std::move(other.next_file_)) {
  other.next_file_ = std::make_unique<std::atomic<int64_t>>(0);
}

ScratchDir& ScratchDir::operator=(ScratchDir&& other) noexcept {
  if (this != &other) {
    (void)Remove();
    path_ = std::exchange(other.path_, std::string());
    mark_ = std::move(other.mark_);
    std::swap(next_file_, other.next_file_);
  }
  return *this;
}

ScratchDir::~ScratchDir() { (void)Remove(); }

std::string ScratchDir::File(std::string_view name) const { return path_ + "/" + std::string(name); }

std::string ScratchDir::NewFile(std::string_view stem) {
  return fmt::format("{}/{}-{}", path_, stem, next_file_->fetch_add(1));
}

Status ScratchDir::Remove() {
  if (path_.empty()) return Status::Ok();
  const std::string path = std::exchange(path_, std::string());
  Status removed = RemoveTree(path);
  mark_.Reset();  // the lock goes last: a sweep never races a half-removed live directory
  return removed;
}

int64_t ScratchDirPid(std::string_view name) {
  constexpr std::string_view kPrefix = ".seer-";
  if (name.substr(0, kPrefix.size()) != kPrefix) return -1;
  // .seer-PURPOSE-PID-XXXXXX: the pid is the all-digit field before the last dash.
  const size_t last = name.rfind('-');
  if (last == std::string_view::npos || last <= kPrefix.size()) return -1;
  const size_t before = name.rfind('-', last - 1);
  if (before == std::string_view::npos || before < kPrefix.size()) return -1;
  const std::string_view pid_text = name.substr(before + 1, last - before - 1);
  if (pid_text.empty() || pid_text.size() > 10 || pid_text.front() == '+') return -1;
  const std::optional<int64_t> pid = ParseNumber<int64_t>(pid_text);
  return pid && *pid > 0 ? *pid : -1;
}

bool ScratchDirIsAbandoned(const std::string& dir) {
  const std::string mark_path = dir + "/" + kScratchOwnerMark;
  auto mark = UniqueFd::Open(mark_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (!mark.ok()) return false;  // no mark: not ours (or not readable): keep
  if (::flock(mark->get(), LOCK_EX | LOCK_NB) != 0) return false;  // owner alive (or error): keep
  return true;  // our lock is dropped when `mark` closes; the caller removes the tree
}

}  // namespace seer
