// standin_export.hpp - visibility of the stand-in SDK's classes. The drivers build with hidden
// visibility by default; the classes they use from these headers (type info for dynamic_cast, key
// functions) must resolve to the stand-in libraries' own definitions, as the vendor's export macros do.
#pragma once

#define XIR_STANDIN_API __attribute__((visibility("default")))
