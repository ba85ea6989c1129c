#ifndef FARECHECK_CZXING_H
#define FARECHECK_CZXING_H

/*
 * A small C API over zxing-cpp 3.1.1 (built from its pinned source by scripts/build-zxing.sh), which is C++ only.
 *
 * Every function catches every C++ exception (Swift cannot unwind through C++), reports failure
 * through its return value and an optional message buffer, and never aborts. Memory handed out
 * by this API is freed by the matching CZXing_free* function.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Symbol formats, as a bit set. Values are our own so that Swift never depends on zxing's enum.
enum {
    CZXING_FORMAT_AZTEC = 1u << 0,
    CZXING_FORMAT_QR = 1u << 1,
    CZXING_FORMAT_MICRO_QR = 1u << 2,
    CZXING_FORMAT_DATA_MATRIX = 1u << 3,
    CZXING_FORMAT_PDF417 = 1u << 4,
    /// Anything else zxing reports (linear codes, MaxiCode) when asked for with CZXING_FORMAT_OTHER.
    CZXING_FORMAT_OTHER = 1u << 5,
};

/// How a grey image becomes black and white before detection (zxing's `Binarizer`).
typedef enum CZXingBinarizer {
    /// Threshold from the local neighbourhood (HybridBinarizer): best for uneven light.
    CZXING_BINARIZER_LOCAL_AVERAGE = 0,
    /// One threshold from the histogram's valley: best for blurred, evenly lit images.
    CZXING_BINARIZER_GLOBAL_HISTOGRAM = 1,
    /// A fixed threshold of 127.
    CZXING_BINARIZER_FIXED_THRESHOLD = 2,
} CZXingBinarizer;

/// Options for one read; start from CZXing_defaultReadOptions().
typedef struct CZXingReadOptions {
    /// CZXING_FORMAT_* bits; 0 means the matrix formats (Aztec, QR, Micro QR, Data Matrix, PDF417).
    uint32_t formats;
    /// Scan every line and try more candidate finder patterns (slower, finds more).
    int32_t tryHarder;
    /// Also try the image rotated by 90, 180 and 270 degrees.
    int32_t tryRotate;
    /// Also try downscaled copies when the image is large (see downscaleThreshold).
    int32_t tryDownscale;
    /// The image holds nothing but one perfectly aligned symbol (a generated image).
    int32_t isPure;
    /// A CZXingBinarizer.
    int32_t binarizer;
    /// min(width, height) from which downscaled copies are tried; 0 keeps zxing's default (500).
    int32_t downscaleThreshold;
    /// Factor of each downscaling step (2, 3 or 4); 0 keeps zxing's default (3).
    int32_t downscaleFactor;
    /// Stop after this many symbols; 0 means no limit (255 in zxing).
    int32_t maxSymbols;
    /// Also try the image with light and dark swapped (zxing 3's tryInvert; off by default, as farecheck has a
    /// pass of its own for inverted images).
    int32_t tryInvert;
} CZXingReadOptions;

/// One decoded symbol.
typedef struct CZXingSymbol {
    /// One CZXING_FORMAT_* value.
    uint32_t format;
    /// The payload exactly as encoded in the symbol (zxing's `bytes()`: no character set conversion).
    uint8_t *bytes;
    size_t byteCount;
    /// Corners in image pixels: top-left, top-right, bottom-right, bottom-left, as x, y pairs.
    int32_t corners[8];
    /// Rotation of the symbol in degrees.
    int32_t orientation;
    /// 1 when the symbol carried an ECI designator (the bytes are still the raw segment bytes).
    int32_t hasECI;
} CZXingSymbol;

/// Status codes of this API.
enum {
    CZXING_OK = 0,
    CZXING_ERROR_ARGUMENT = 1,
    CZXING_ERROR_LIBRARY = 2,
    CZXING_ERROR_MEMORY = 3,
};

/// Options that match zxing's defaults for the matrix formats.
CZXingReadOptions CZXing_defaultReadOptions(void);

/// Reads every symbol in an 8-bit luminance image.
///
/// On success stores a newly allocated array in `*symbols` (NULL when none was found) and its length in
/// `*count`; free it with CZXing_freeSymbols. On failure returns a CZXING_ERROR_* code and writes a
/// NUL-terminated message into `message` (when not NULL).
int CZXing_read(const uint8_t *luminance, int32_t width, int32_t height, int32_t rowStride,
                const CZXingReadOptions *options, CZXingSymbol **symbols, size_t *count,
                char *message, size_t messageCapacity);

/// Frees what CZXing_read returned.
void CZXing_freeSymbols(CZXingSymbol *symbols, size_t count);

/// Encodes arbitrary bytes as a symbol and returns its module matrix without a quiet zone.
///
/// `format` is CZXING_FORMAT_AZTEC or CZXING_FORMAT_QR. `eccLevel` is zxing's 0...8 scale (for Aztec the
/// error correction share is eccLevel * 12.5 %), or -1 for the format's default. Each byte is carried
/// as is (no ECI), so binary payloads round trip exactly. On success `*modules` holds
/// `*width` x `*height` bytes, row after row, 1 for a dark module and 0 for a light one; free it with
/// CZXing_freeMatrix.
int CZXing_write(const uint8_t *bytes, size_t byteCount, uint32_t format, int32_t eccLevel,
                 uint8_t **modules, int32_t *width, int32_t *height,
                 char *message, size_t messageCapacity);

/// Frees what CZXing_write returned.
void CZXing_freeMatrix(uint8_t *modules);

#ifdef __cplusplus
}
#endif

#endif
