#ifndef FARECHECK_CIMAGECODECS_H
#define FARECHECK_CIMAGECODECS_H

/*
 * PNG and JPEG to and from 8-bit greyscale, over libpng and libjpeg.
 *
 * Both libraries report errors by longjmp, which Swift cannot survive: these functions catch them in C
 * and return a status code with a message instead. Nothing is ever printed to stderr and nothing aborts.
 * Buffers handed out are freed with CImageCodecs_free.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Status codes.
enum {
    CIMAGECODECS_OK = 0,
    /// The data is not a well-formed file of that format (bad signature, broken stream).
    CIMAGECODECS_ERROR_CORRUPT = 1,
    /// The data ended before the image did.
    CIMAGECODECS_ERROR_TRUNCATED = 2,
    /// Well-formed, but a variant this code does not read.
    CIMAGECODECS_ERROR_UNSUPPORTED = 3,
    /// More pixels than the caller allows.
    CIMAGECODECS_ERROR_TOO_LARGE = 4,
    CIMAGECODECS_ERROR_MEMORY = 5,
    CIMAGECODECS_ERROR_ARGUMENT = 6,
};

/// Decodes a PNG of any colour type and bit depth to 8-bit grey (alpha composited onto white).
///
/// On success `*pixels` holds `*width` x `*height` bytes, row after row. `maxPixels` caps width x height
/// before any pixel memory is allocated. `message` (may be NULL) receives a NUL-terminated reason on failure.
int CImageCodecs_decodePNG(const uint8_t *data, size_t size, int64_t maxPixels,
                           uint8_t **pixels, int32_t *width, int32_t *height,
                           char *message, size_t messageCapacity);

/// Decodes a baseline or progressive JPEG (greyscale, YCbCr, RGB, CMYK or YCCK) to 8-bit grey.
///
/// Same contract as CImageCodecs_decodePNG. A file cut short is CIMAGECODECS_ERROR_TRUNCATED even though
/// libjpeg itself would only warn and fill in grey.
int CImageCodecs_decodeJPEG(const uint8_t *data, size_t size, int64_t maxPixels,
                            uint8_t **pixels, int32_t *width, int32_t *height,
                            char *message, size_t messageCapacity);

/// Encodes 8-bit grey pixels (row after row, no padding) as a greyscale PNG.
int CImageCodecs_encodePNG(const uint8_t *pixels, int32_t width, int32_t height,
                           uint8_t **data, size_t *size, char *message, size_t messageCapacity);

/// Encodes 8-bit pixels as a baseline JPEG of the given quality (1...100): grey when `components` is 1,
/// colour when it is 3 (R, G, B interleaved).
int CImageCodecs_encodeJPEG(const uint8_t *pixels, int32_t width, int32_t height, int32_t components,
                            int32_t quality, uint8_t **data, size_t *size, char *message, size_t messageCapacity);

/// Frees a buffer returned by this module.
void CImageCodecs_free(void *buffer);

#ifdef __cplusplus
}
#endif

#endif
