// A progress line on rank 0: percent, rate and ETA. On a terminal it redraws
// in place; otherwise (Slurm logs, pipes) it prints a plain line every 10%
// and at least every 10 s, easing to every `plain_interval` seconds over
// a long run's first 10 minutes. mpirun hands ranks a pseudo
// terminal even when its own output goes to a file, so under mpirun or Slurm
// lines are plain unless STRATA_PROGRESS=tty; STRATA_PROGRESS=off silences it.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace strata {

class Progress {
 public:
  // total: work units of the whole run (all ranks); unit: "paths".
  Progress(bool enabled, std::string label, double total, std::string unit, double plain_interval = 30.0);
  ~Progress();
  // done: work units finished so far, whole run (estimate from rank 0's share);
  // fraction: the share of the run's work that is, where its units differ in
  // cost (else done / total): it sets the percentage and the ETA.
  void update(double done, double fraction = -1);
  void finish();
  // A warning on a line of its own (a drawn tty line is ended first); at
  // most once a minute for the same text.
  void warn(const std::string& text);

 private:
  void draw(double done, double fraction, bool final);
  bool enabled_, tty_;
  std::string label_, unit_;
  double total_, plain_interval_;
  double last_drawn_ = 0;   // work done on the last line drawn
  std::chrono::steady_clock::time_point start_, last_draw_;
  int last_decile_ = 0;
  bool drawn_ = false, finished_ = false;
  std::string last_warning_;
  std::chrono::steady_clock::time_point last_warned_{};
};

}  // namespace strata
