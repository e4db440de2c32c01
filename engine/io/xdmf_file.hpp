// What the XDMF sidecars of grid and particle output share: the file name
// beside the HDF5 output, numbers that round-trip exactly, and the file
// itself, which grows by appending.
//
// A sidecar is a head, one entry per frame, and a tail (the closing tags).
// Each frame's entry names that frame's views (below), which never change
// once written, so neither does the entry: a new frame overwrites the tail
// with its entry and the tail, O(frame) bytes, where rewriting the whole
// sidecar would cost O(frames) each time and O(frames^2) over a run.
// Creation and restarts rewrite it whole through a temporary name and a
// rename. A crash during an append can tear only the tail; the next frame,
// or a restart, writes it again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata {
class H5Output;
}

namespace strata::xdmf {

// OUT.xmf for OUT.h5.
std::string path_for(const std::string& h5_path);

// Each frame of a series, as a dataset of its own: both of ParaView's XDMF
// readers read whole datasets, and the XDMF 3 reader it picks for .xmf
// cannot read a frame of a series through a HyperSlab (it finds no array
// type and drops the data). So every frame written gets, in OUT.h5, a
// virtual dataset per series (H5Output::frame_view) that the sidecar names:
// /xdmf/frame<F>/<name>, the frame's shape, no data of its own.
inline constexpr const char* kViews = "/xdmf";
std::string view_path(std::int64_t frame, const std::string& name);
// A series whose frames the sidecar shows: its name there and its path.
struct Series {
  std::string name, path;
  std::vector<std::int64_t> shape = {};  // the view's shape; empty: a frame's
};
// Frame `frame`'s views of `series`. Collective.
void write_views(H5Output& o, std::int64_t frame, const std::vector<Series>& series);
// After a restart cut or grew the series from `before` to `frames` frames:
// the views of exactly those frames (an older output has none). Collective.
void restore_views(H5Output& o, std::int64_t frames, std::int64_t before, const std::vector<Series>& series);
// %.17g: the XDMF value equals the double in the HDF5 file.
std::string number(double v);

// The head of a sidecar whose frames form the temporal collection `name`,
// and the tail that closes it.
std::string head(const std::string& name);
inline constexpr const char* kTail = "    </Grid>\n  </Domain>\n</Xdmf>\n";

class Sidecar {
 public:
  Sidecar() = default;
  Sidecar(std::string path, std::string head, std::string tail)
      : path_(std::move(path)), head_(std::move(head)), tail_(std::move(tail)) {}

  // The whole file, atomically: head, entries, tail.
  void rewrite(const std::vector<std::string>& entries);
  // One more entry over the tail. False (nothing written) when the file is
  // not the one this object last wrote (missing, or another size): the
  // caller rewrites it whole. ResourceError when the write fails.
  bool append(const std::string& entry);

 private:
  std::string path_, head_, tail_;
  std::uintmax_t tail_at_ = 0;   // byte offset of the tail in the file
};

}  // namespace strata::xdmf
