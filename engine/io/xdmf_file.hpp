// What the XDMF sidecars of grid and particle output share: the file name
// beside the HDF5 output, numbers that round-trip exactly, and the atomic
// rewrite (temporary name, then rename) so a reader never sees half a file.
#pragma once

#include <string>

namespace strata::xdmf {

// OUT.xmf for OUT.h5.
std::string path_for(const std::string& h5_path);
// %.17g: the XDMF value equals the double in the HDF5 file.
std::string number(double v);
// Writes `text` to `path` through `path`.tmp and a rename; ResourceError on failure.
void write_atomically(const std::string& path, const std::string& text);

}  // namespace strata::xdmf
