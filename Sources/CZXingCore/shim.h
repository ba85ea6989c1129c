// zxing-cpp's headers are C++, which Swift never includes: this module only carries farecheck-zxing.pc's include
// and library paths (and the link to libfarecheck-zxing.a) to CZXing, the C++ file that wraps the library in a C API.
