#ifndef FARECHECK_CZLIB_SHIM_H
#define FARECHECK_CZLIB_SHIM_H
#include <zlib.h>

/// inflateInit is a macro that passes the library version and struct size: Swift cannot call it.
static inline int CZlib_inflateInit(z_streamp stream) { return inflateInit(stream); }
/// inflateInit2 is a macro, as above; negative window bits read a raw deflate stream (zip entries).
static inline int CZlib_inflateInit2(z_streamp stream, int windowBits) { return inflateInit2(stream, windowBits); }
/// deflateInit is a macro, as above.
static inline int CZlib_deflateInit(z_streamp stream, int level) { return deflateInit(stream, level); }
#endif
