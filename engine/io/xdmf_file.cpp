#include "engine/io/xdmf_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/io/h5_output.hpp"
#include "engine/runtime/error.hpp"

namespace strata::xdmf {

std::string path_for(const std::string& h5_path) {
  return std::filesystem::path(h5_path).replace_extension(".xmf").string();
}

namespace {

// As H5Output words its failures, so a full disk reads the same whichever
// file it stopped.
std::string write_failure(const std::string& path, int err) {
  if (err == ENOSPC || err == EDQUOT) return "disk full writing " + path + " (the XDMF sidecar)";
  return "cannot write " + path + " (the XDMF sidecar: " + (err != 0 ? std::strerror(err) : "unknown error") + ")";
}

// Writes `text` to `path` through `path`.tmp and a rename; ResourceError on failure.
void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    file << text;
    file.flush();
    if (!file) throw ResourceError(write_failure(tmp, errno));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw ResourceError(path + ": cannot rename the XDMF sidecar into place (" + ec.message() + ")");
}

}  // namespace

std::string view_path(std::int64_t frame, const std::string& name) {
  return std::string(kViews) + "/frame" + std::to_string(frame) + "/" + name;
}

void write_views(H5Output& o, std::int64_t frame, const std::vector<Series>& series) {
  for (const Series& s : series) o.frame_view(view_path(frame, s.name), s.path, frame, s.shape);
}

void restore_views(H5Output& o, std::int64_t frames, std::int64_t before, const std::vector<Series>& series) {
  for (std::int64_t f = frames; f < before; ++f) o.remove(std::string(kViews) + "/frame" + std::to_string(f));
  for (std::int64_t f = 0; f < frames; ++f)
    for (const Series& s : series)
      if (!o.exists(view_path(f, s.name))) o.frame_view(view_path(f, s.name), s.path, f, s.shape);
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string head(const std::string& name) {
  return "<?xml version=\"1.0\" ?>\n"
         "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
         "<Xdmf Version=\"3.0\" xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n"
         "  <Domain>\n"
         "    <Grid Name=\"" + name + "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
}

void Sidecar::rewrite(const std::vector<std::string>& entries) {
  std::string text = head_;
  for (const std::string& e : entries) text += e;
  tail_at_ = text.size();
  text += tail_;
  write_atomically(path_, text);
}

bool Sidecar::append(const std::string& entry) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path_, ec);
  if (ec || size != tail_at_ + tail_.size()) return false;
  std::FILE* f = std::fopen(path_.c_str(), "r+b");
  if (f == nullptr) return false;
  const std::string text = entry + tail_;
  const bool ok = std::fseek(f, static_cast<long>(tail_at_), SEEK_SET) == 0 &&
                  std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int err = ok ? 0 : errno;
  if (std::fclose(f) != 0 || !ok) throw ResourceError(write_failure(path_, err != 0 ? err : errno));
  tail_at_ += entry.size();
  return true;
}

}  // namespace strata::xdmf
