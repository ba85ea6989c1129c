#include "CImageCodecs.h"

#include <png.h>
#include <jpeglib.h>
#include <jerror.h>

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(JSAMPLE) == 1, "libjpeg must be built for 8-bit samples");

static void CImageCodecs_setMessage(char *message, size_t capacity, const char *text) {
    if (message != NULL && capacity > 0) {
        snprintf(message, capacity, "%s", text);
    }
}

void CImageCodecs_free(void *buffer) {
    free(buffer);
}

// MARK: - PNG

/// What the libpng callbacks share with the decoding function.
typedef struct CImageCodecsPNGContext {
    const uint8_t *data;
    size_t size;
    size_t offset;
    int truncated;
    char message[200];
    /// The encoder's growing output.
    uint8_t *output;
    size_t outputSize;
    size_t outputCapacity;
    int outOfMemory;
} CImageCodecsPNGContext;

static void CImageCodecs_pngError(png_structp png, png_const_charp text) {
    CImageCodecsPNGContext *context = (CImageCodecsPNGContext *)png_get_error_ptr(png);
    snprintf(context->message, sizeof context->message, "%s", text);
    // Returning would let libpng print to stderr and abort: jump back to the caller's setjmp instead.
    png_longjmp(png, 1);
}

static void CImageCodecs_pngWarning(png_structp png, png_const_charp text) {
    // Warnings (a misplaced chunk, an odd ICC profile) do not stop decoding; keep them off stderr.
    (void)png;
    (void)text;
}

static void CImageCodecs_pngRead(png_structp png, png_bytep destination, png_size_t length) {
    CImageCodecsPNGContext *context = (CImageCodecsPNGContext *)png_get_io_ptr(png);
    if (length > context->size - context->offset) {
        context->truncated = 1;
        png_error(png, "the file ends before the image does");
    }
    memcpy(destination, context->data + context->offset, length);
    context->offset += length;
}

static void CImageCodecs_pngWrite(png_structp png, png_bytep source, png_size_t length) {
    CImageCodecsPNGContext *context = (CImageCodecsPNGContext *)png_get_io_ptr(png);
    if (length > context->outputCapacity - context->outputSize) {
        size_t capacity = context->outputCapacity > 0 ? context->outputCapacity : 4096;
        while (capacity - context->outputSize < length) capacity *= 2;
        uint8_t *grown = (uint8_t *)realloc(context->output, capacity);
        if (grown == NULL) {
            context->outOfMemory = 1;
            png_error(png, "out of memory");
        }
        context->output = grown;
        context->outputCapacity = capacity;
    }
    memcpy(context->output + context->outputSize, source, length);
    context->outputSize += length;
}

static void CImageCodecs_pngFlush(png_structp png) {
    (void)png;
}

int CImageCodecs_decodePNG(const uint8_t *data, size_t size, int64_t maxPixels,
                           uint8_t **pixels, int32_t *width, int32_t *height,
                           char *message, size_t messageCapacity) {
    if (pixels == NULL || width == NULL || height == NULL || (data == NULL && size > 0)) {
        CImageCodecs_setMessage(message, messageCapacity, "invalid arguments");
        return CIMAGECODECS_ERROR_ARGUMENT;
    }
    *pixels = NULL;
    *width = 0;
    *height = 0;
    if (size < 8 || png_sig_cmp((png_const_bytep)data, 0, 8) != 0) {
        CImageCodecs_setMessage(message, messageCapacity, size < 8 ? "the file is too short to be a PNG"
                                                                   : "not a PNG file (bad signature)");
        return size < 8 ? CIMAGECODECS_ERROR_TRUNCATED : CIMAGECODECS_ERROR_CORRUPT;
    }

    CImageCodecsPNGContext context;
    memset(&context, 0, sizeof context);
    context.data = data;
    context.size = size;

    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &context, CImageCodecs_pngError,
                                             CImageCodecs_pngWarning);
    if (png == NULL) {
        CImageCodecs_setMessage(message, messageCapacity, "out of memory");
        return CIMAGECODECS_ERROR_MEMORY;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_read_struct(&png, NULL, NULL);
        CImageCodecs_setMessage(message, messageCapacity, "out of memory");
        return CIMAGECODECS_ERROR_MEMORY;
    }
    // Changed between setjmp and longjmp, so volatile: their values must survive the jump.
    uint8_t *volatile decoded = NULL;
    png_bytep *volatile rows = NULL;
    volatile int status = CIMAGECODECS_ERROR_CORRUPT;

    if (setjmp(png_jmpbuf(png))) {
        free(rows);
        free(decoded);
        png_destroy_read_struct(&png, &info, NULL);
        if (context.truncated) status = CIMAGECODECS_ERROR_TRUNCATED;
        CImageCodecs_setMessage(message, messageCapacity, context.message);
        return status;
    }
    png_set_read_fn(png, &context, CImageCodecs_pngRead);
    png_read_info(png, info);

    png_uint_32 imageWidth = png_get_image_width(png, info);
    png_uint_32 imageHeight = png_get_image_height(png, info);
    if (maxPixels > 0 && (int64_t)imageWidth * (int64_t)imageHeight > maxPixels) {
        status = CIMAGECODECS_ERROR_TOO_LARGE;
        png_error(png, "the image has more pixels than allowed");
    }
    int colorType = png_get_color_type(png, info);
    int bitDepth = png_get_bit_depth(png, info);

    // Every variant becomes 8-bit grey, with alpha where the file has any.
    if (colorType == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (colorType == PNG_COLOR_TYPE_GRAY && bitDepth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (bitDepth == 16) png_set_scale_16(png);
    if (colorType == PNG_COLOR_TYPE_RGB || colorType == PNG_COLOR_TYPE_RGB_ALPHA
        || colorType == PNG_COLOR_TYPE_PALETTE) {
        png_set_rgb_to_gray_fixed(png, PNG_ERROR_ACTION_NONE, -1, -1);
    }
    png_set_interlace_handling(png);
    png_read_update_info(png, info);

    int channels = png_get_channels(png, info);
    size_t rowBytes = png_get_rowbytes(png, info);
    if ((channels != 1 && channels != 2) || png_get_bit_depth(png, info) != 8
        || rowBytes != (size_t)imageWidth * (size_t)channels) {
        status = CIMAGECODECS_ERROR_UNSUPPORTED;
        png_error(png, "this PNG variant cannot be converted to 8-bit grey");
    }
    decoded = (uint8_t *)malloc(rowBytes * imageHeight);
    rows = (png_bytep *)malloc(sizeof(png_bytep) * imageHeight);
    if (decoded == NULL || rows == NULL) {
        status = CIMAGECODECS_ERROR_MEMORY;
        png_error(png, "out of memory for the image");
    }
    for (png_uint_32 y = 0; y < imageHeight; y++) rows[y] = decoded + (size_t)y * rowBytes;
    png_read_image(png, rows);
    // The end chunk is not read: a file whose pixels are complete is good enough to scan.

    uint8_t *grey = decoded;
    if (channels == 2) {
        // Transparent parts become white, like a ticket shown on a white page.
        size_t count = (size_t)imageWidth * imageHeight;
        for (size_t index = 0; index < count; index++) {
            unsigned value = decoded[2 * index];
            unsigned alpha = decoded[2 * index + 1];
            grey[index] = (uint8_t)((value * alpha + 255u * (255u - alpha) + 127u) / 255u);
        }
        uint8_t *shrunk = (uint8_t *)realloc(decoded, count > 0 ? count : 1);
        if (shrunk != NULL) grey = shrunk;
    }
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    *pixels = grey;
    *width = (int32_t)imageWidth;
    *height = (int32_t)imageHeight;
    return CIMAGECODECS_OK;
}

int CImageCodecs_encodePNG(const uint8_t *pixels, int32_t width, int32_t height,
                           uint8_t **data, size_t *size, char *message, size_t messageCapacity) {
    if (pixels == NULL || data == NULL || size == NULL || width <= 0 || height <= 0) {
        CImageCodecs_setMessage(message, messageCapacity, "invalid arguments");
        return CIMAGECODECS_ERROR_ARGUMENT;
    }
    *data = NULL;
    *size = 0;
    CImageCodecsPNGContext context;
    memset(&context, 0, sizeof context);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &context, CImageCodecs_pngError,
                                              CImageCodecs_pngWarning);
    if (png == NULL) {
        CImageCodecs_setMessage(message, messageCapacity, "out of memory");
        return CIMAGECODECS_ERROR_MEMORY;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        CImageCodecs_setMessage(message, messageCapacity, "out of memory");
        return CIMAGECODECS_ERROR_MEMORY;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(context.output);
        CImageCodecs_setMessage(message, messageCapacity, context.message);
        return context.outOfMemory ? CIMAGECODECS_ERROR_MEMORY : CIMAGECODECS_ERROR_ARGUMENT;
    }
    png_set_write_fn(png, &context, CImageCodecs_pngWrite, CImageCodecs_pngFlush);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int32_t y = 0; y < height; y++) {
        png_write_row(png, (png_const_bytep)(pixels + (size_t)y * (size_t)width));
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    *data = context.output;
    *size = context.outputSize;
    return CIMAGECODECS_OK;
}

// MARK: - JPEG

/// libjpeg's error manager plus the jump target and what went wrong.
typedef struct CImageCodecsJPEGError {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    int truncated;
    char message[JMSG_LENGTH_MAX + 64];
} CImageCodecsJPEGError;

static void CImageCodecs_jpegErrorExit(j_common_ptr info) {
    CImageCodecsJPEGError *error = (CImageCodecsJPEGError *)info->err;
    char text[JMSG_LENGTH_MAX];
    (*info->err->format_message)(info, text);
    snprintf(error->message, sizeof error->message, "%s", text);
    // libjpeg's default would print and exit(): jump back to the caller's setjmp instead.
    longjmp(error->jump, 1);
}

static void CImageCodecs_jpegEmitMessage(j_common_ptr info, int level) {
    // Level -1 is a warning about the data; trace messages (level >= 0) are ignored.
    if (level >= 0) return;
    CImageCodecsJPEGError *error = (CImageCodecsJPEGError *)info->err;
    info->err->num_warnings++;
    if (info->err->msg_code == JWRN_JPEG_EOF) error->truncated = 1;
}

static void CImageCodecs_jpegOutputMessage(j_common_ptr info) {
    // Never print to stderr.
    (void)info;
}

static int CImageCodecs_jpegStatus(int messageCode) {
    switch (messageCode) {
    case JERR_BAD_PRECISION:
    case JERR_CONVERSION_NOTIMPL:
    case JERR_NOT_COMPILED:
    case JERR_BAD_J_COLORSPACE:
    case JERR_NOTIMPL:
        return CIMAGECODECS_ERROR_UNSUPPORTED;
    case JERR_OUT_OF_MEMORY:
        return CIMAGECODECS_ERROR_MEMORY;
    case JERR_INPUT_EMPTY:
    case JERR_INPUT_EOF:
    case JERR_NO_IMAGE:
        return CIMAGECODECS_ERROR_TRUNCATED;
    default:
        return CIMAGECODECS_ERROR_CORRUPT;
    }
}

int CImageCodecs_decodeJPEG(const uint8_t *data, size_t size, int64_t maxPixels,
                            uint8_t **pixels, int32_t *width, int32_t *height,
                            char *message, size_t messageCapacity) {
    if (pixels == NULL || width == NULL || height == NULL || (data == NULL && size > 0)) {
        CImageCodecs_setMessage(message, messageCapacity, "invalid arguments");
        return CIMAGECODECS_ERROR_ARGUMENT;
    }
    *pixels = NULL;
    *width = 0;
    *height = 0;
    if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) {
        CImageCodecs_setMessage(message, messageCapacity, size < 4 ? "the file is too short to be a JPEG"
                                                                   : "not a JPEG file (bad signature)");
        return size < 4 ? CIMAGECODECS_ERROR_TRUNCATED : CIMAGECODECS_ERROR_CORRUPT;
    }

    struct jpeg_decompress_struct info;
    CImageCodecsJPEGError error;
    memset(&error, 0, sizeof error);
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = CImageCodecs_jpegErrorExit;
    error.manager.emit_message = CImageCodecs_jpegEmitMessage;
    error.manager.output_message = CImageCodecs_jpegOutputMessage;

    // Changed between setjmp and longjmp, so volatile: their values must survive the jump.
    uint8_t *volatile grey = NULL;
    uint8_t *volatile row = NULL;
    volatile int status = CIMAGECODECS_OK;

    if (setjmp(error.jump)) {
        free(row);
        free(grey);
        jpeg_destroy_decompress(&info);
        if (status == CIMAGECODECS_OK) {
            status = error.truncated ? CIMAGECODECS_ERROR_TRUNCATED
                                     : CImageCodecs_jpegStatus(error.manager.msg_code);
        }
        CImageCodecs_setMessage(message, messageCapacity, error.message);
        return status;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, (const unsigned char *)data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    if (error.truncated) {
        status = CIMAGECODECS_ERROR_TRUNCATED;
        snprintf(error.message, sizeof error.message, "the file ends before the image does");
        longjmp(error.jump, 1);
    }
    if (maxPixels > 0 && (int64_t)info.image_width * (int64_t)info.image_height > maxPixels) {
        status = CIMAGECODECS_ERROR_TOO_LARGE;
        snprintf(error.message, sizeof error.message, "the image has more pixels than allowed");
        longjmp(error.jump, 1);
    }
    // libjpeg turns YCbCr and RGB into grey itself, but not CMYK: those come out as CMYK and are mixed here.
    int cmyk = info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK;
    info.out_color_space = cmyk ? JCS_CMYK : JCS_GRAYSCALE;
    jpeg_start_decompress(&info);

    size_t imageWidth = info.output_width;
    size_t imageHeight = info.output_height;
    size_t components = (size_t)info.output_components;
    grey = (uint8_t *)malloc(imageWidth * imageHeight > 0 ? imageWidth * imageHeight : 1);
    row = (uint8_t *)malloc(imageWidth * components > 0 ? imageWidth * components : 1);
    if (grey == NULL || row == NULL) {
        status = CIMAGECODECS_ERROR_MEMORY;
        snprintf(error.message, sizeof error.message, "out of memory for the image");
        longjmp(error.jump, 1);
    }
    while (info.output_scanline < info.output_height) {
        size_t y = info.output_scanline;
        JSAMPROW rowPointer = row;
        if (jpeg_read_scanlines(&info, &rowPointer, 1) != 1) break;
        uint8_t *target = grey + y * imageWidth;
        if (components == 1) {
            memcpy(target, row, imageWidth);
        } else {
            for (size_t x = 0; x < imageWidth; x++) {
                // Adobe writes CMYK inverted, so each value is already "how much light is left".
                unsigned c = row[4 * x], m = row[4 * x + 1], y2 = row[4 * x + 2], k = row[4 * x + 3];
                unsigned r = c * k / 255u, g = m * k / 255u, b = y2 * k / 255u;
                target[x] = (uint8_t)((306u * r + 601u * g + 117u * b + 512u) >> 10);
            }
        }
    }
    if (error.truncated) {
        status = CIMAGECODECS_ERROR_TRUNCATED;
        snprintf(error.message, sizeof error.message, "the file ends before the image does");
        longjmp(error.jump, 1);
    }
    // jpeg_finish_decompress would read on to the end marker; what is after the pixels does not matter.
    jpeg_abort_decompress(&info);
    jpeg_destroy_decompress(&info);
    free(row);
    *pixels = grey;
    *width = (int32_t)imageWidth;
    *height = (int32_t)imageHeight;
    return CIMAGECODECS_OK;
}

int CImageCodecs_encodeJPEG(const uint8_t *pixels, int32_t width, int32_t height, int32_t components,
                            int32_t quality, uint8_t **data, size_t *size, char *message, size_t messageCapacity) {
    if (pixels == NULL || data == NULL || size == NULL || width <= 0 || height <= 0 || quality < 1
        || quality > 100 || (components != 1 && components != 3)) {
        CImageCodecs_setMessage(message, messageCapacity, "invalid arguments");
        return CIMAGECODECS_ERROR_ARGUMENT;
    }
    *data = NULL;
    *size = 0;
    struct jpeg_compress_struct info;
    CImageCodecsJPEGError error;
    memset(&error, 0, sizeof error);
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = CImageCodecs_jpegErrorExit;
    error.manager.emit_message = CImageCodecs_jpegEmitMessage;
    error.manager.output_message = CImageCodecs_jpegOutputMessage;
    // jpeg_mem_dest allocates and grows this buffer; it must survive a longjmp to be freed.
    unsigned char *volatile output = NULL;
    unsigned long outputSize = 0;

    if (setjmp(error.jump)) {
        jpeg_destroy_compress(&info);
        free(output);
        CImageCodecs_setMessage(message, messageCapacity, error.message);
        return CImageCodecs_jpegStatus(error.manager.msg_code);
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, (unsigned char **)&output, &outputSize);
    info.image_width = (JDIMENSION)width;
    info.image_height = (JDIMENSION)height;
    info.input_components = components;
    info.in_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    jpeg_start_compress(&info, TRUE);
    while (info.next_scanline < info.image_height) {
        JSAMPROW rowPointer = (JSAMPROW)(pixels + (size_t)info.next_scanline * (size_t)width * (size_t)components);
        jpeg_write_scanlines(&info, &rowPointer, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    *data = output;
    *size = outputSize;
    return CIMAGECODECS_OK;
}
