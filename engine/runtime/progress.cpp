#include "engine/runtime/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace strata {
namespace {

// 1.23e+08 -> "123 M"
std::string human_rate(double v) {
  const char* suffix[] = {" ", " k", " M", " G", " T", " P"};
  int i = 0;
  while (std::fabs(v) >= 1000.0 && i < 5) {
    v /= 1000.0;
    ++i;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 10 ? "%.2f%s" : v < 100 ? "%.1f%s" : "%.0f%s", v, suffix[i]);
  return buf;
}

// "tty", "plain" or "off": STRATA_PROGRESS, else tty only for a direct terminal.
std::string progress_style() {
  if (const char* s = std::getenv("STRATA_PROGRESS"); s != nullptr && *s != '\0') return s;
  const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("SLURM_JOB_ID") != nullptr;
  return isatty(STDOUT_FILENO) == 1 && !launched ? "tty" : "plain";
}

}  // namespace

Progress::Progress(bool enabled, std::string label, double total, std::string unit, double plain_interval)
    : enabled_(enabled && total > 0 && progress_style() != "off"),
      tty_(progress_style() == "tty"),
      label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      plain_interval_(plain_interval),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  if (drawn_ && !finished_ && tty_) std::fputs("\n", stdout);
}

void Progress::update(double done, double fraction) {
  if (!enabled_) return;
  if (fraction < 0) fraction = done / total_;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_draw_).count();
  const int decile = static_cast<int>(10.0 * fraction);
  // Plain lines: each 10%, and a run never silent for long: at least every
  // 10 s, easing to plain_interval_ over a long run's first 10 minutes
  // (a day-long job's log gets a line a half minute, not one every 10 s).
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double heartbeat = std::clamp(elapsed / 20.0, std::min(10.0, plain_interval_), plain_interval_);
  const bool due = tty_ ? since >= 0.2 : (since >= heartbeat || (decile > last_decile_ && since >= 1.0));
  if (!due) return;
  last_decile_ = decile;
  draw(done, fraction, false);
}

void Progress::warn(const std::string& text) {
  if (!enabled_ || text.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  if (text == last_warning_ && std::chrono::duration<double>(now - last_warned_).count() < 60.0) return;
  last_warning_ = text;
  last_warned_ = now;
  std::printf("%swarning: %s\n", drawn_ && tty_ && !finished_ ? "\n" : "", text.c_str());
  std::fflush(stdout);
}

void Progress::finish() {
  if (!enabled_ || finished_) return;
  // The last step's update may have printed 100% already: a plain line is
  // printed once; a drawn terminal line is redrawn with its ETA cleared.
  if (drawn_ && (tty_ || last_drawn_ < total_)) draw(total_, 1.0, true);
  finished_ = true;
}

void Progress::draw(double done, double fraction, bool final) {
  const auto now = std::chrono::steady_clock::now();
  last_draw_ = now;
  last_drawn_ = done;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? done / elapsed : 0.0;
  // The rest at the pace of the share done so far.
  const double eta = fraction > 0 ? elapsed * (1.0 - fraction) / fraction : 0.0;
  char line[256];
  // Rounded down: 100.0% means done.
  std::snprintf(line, sizeof line, "%s %5.1f%%  %s%s/s  elapsed %.0f s  ETA %.0f s", label_.c_str(),
                std::floor(1000.0 * fraction) / 10.0, human_rate(rate).c_str(), unit_.c_str(), elapsed,
                final ? 0.0 : eta);
  if (tty_) {
    std::printf("\r%-78s%s", line, final ? "\n" : "");
  } else {
    std::printf("%s\n", line);
  }
  std::fflush(stdout);
  drawn_ = true;
}

}  // namespace strata
