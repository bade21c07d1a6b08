// XirExport.hpp - XIR_DLLESPEC, which marks what libxir exports (stand-in). The drivers build with hidden
// visibility; XIR's classes carry the marker, VART's do not, as in Vitis AI's own headers.
#pragma once

#define XIR_DLLESPEC __attribute__((visibility("default")))
