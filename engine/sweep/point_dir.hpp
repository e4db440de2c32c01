// The directory of one sweep point and its markers:
//   input.toml  the point's resolved input
//   output.h5   its output
//   log         what the run printed
//   lock        flock()ed while a process runs the point
//   done        written last, after the output is complete
//   failed      the error message of a failed run
// A flock is released by the kernel when its process ends, so a killed
// sweep leaves no stale claim behind.
#pragma once

#include <string>

namespace strata {

enum class PointStatus { pending, running, done, failed };
const char* to_string(PointStatus s);

// An exclusive flock on <dir>/lock, held until destruction (or process end).
class PointLock {
 public:
  // Creates the directory and the lock file if needed; returns an unheld
  // lock when another process (or another open of it here) holds it.
  // Throws Error when the directory or file cannot be made.
  static PointLock try_acquire(const std::string& dir);
  PointLock() = default;
  PointLock(PointLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  PointLock& operator=(PointLock&& o) noexcept;
  PointLock(const PointLock&) = delete;
  PointLock& operator=(const PointLock&) = delete;
  ~PointLock();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// The point's state: `done` marker, else `failed` marker, else a held lock
// (running), else pending. Reads only.
PointStatus point_status(const std::string& dir);
// The message in the `failed` marker ("" when none).
std::string failure_message(const std::string& dir);

bool marker_exists(const std::string& dir, const char* name);
void remove_marker(const std::string& dir, const char* name);
// Writes a whole file (a marker, a point's input) through a temporary name
// and a rename, so a reader never sees half of it. Throws Error on failure.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace strata
