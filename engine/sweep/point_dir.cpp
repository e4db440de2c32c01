#include "engine/sweep/point_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "engine/runtime/error.hpp"

namespace strata {

const char* to_string(PointStatus s) {
  switch (s) {
    case PointStatus::pending: return "pending";
    case PointStatus::running: return "running";
    case PointStatus::done: return "done";
    case PointStatus::failed: return "failed";
  }
  return "?";
}

PointLock PointLock::try_acquire(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ExitCode::resources, "cannot create the point directory '" + dir + "' (" + ec.message() + ")");
  const std::string path = dir + "/lock";
  PointLock lock;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(ExitCode::resources, "cannot open '" + path + "' (" + std::strerror(errno) + ")");
  // LOCK_NB: a busy point is someone else's; the caller moves on to the next.
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return lock;
  }
  lock.fd_ = fd;
  return lock;
}

PointLock& PointLock::operator=(PointLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

PointLock::~PointLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

bool marker_exists(const std::string& dir, const char* name) {
  std::error_code ec;
  return std::filesystem::exists(dir + "/" + name, ec);
}

PointStatus point_status(const std::string& dir) {
  if (marker_exists(dir, "done")) return PointStatus::done;
  if (marker_exists(dir, "failed")) return PointStatus::failed;
  // Running while a process holds the lock: not even a shared lock can be had then.
  const int fd = ::open((dir + "/lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return PointStatus::pending;
  const bool busy = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return busy ? PointStatus::running : PointStatus::pending;
}

std::string failure_message(const std::string& dir) {
  std::ifstream f(dir + "/failed");
  std::ostringstream s;
  s << f.rdbuf();
  std::string text = s.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.flush();
    if (!f) throw Error(ExitCode::resources, "cannot write '" + tmp + "' (" + std::strerror(errno) + ")");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw Error(ExitCode::resources, "cannot rename '" + tmp + "' to '" + path + "' (" + std::strerror(errno) + ")");
  }
}

void remove_marker(const std::string& dir, const char* name) {
  std::error_code ec;
  std::filesystem::remove(dir + "/" + name, ec);
}

}  // namespace strata
