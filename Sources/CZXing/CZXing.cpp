// zxing-cpp 3.1.1, built from the pinned source by scripts/build-zxing.sh (see docs/camera.md for why not Debian's 1.4).
#include "CZXing.h"

#include <ZXing/BitMatrix.h>
#include <ZXing/MultiFormatWriter.h>
#include <ZXing/ReadBarcode.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

using namespace ZXing;

namespace {

void CZXing_setMessage(char *message, size_t capacity, const char *text) {
    if (message != nullptr && capacity > 0) {
        std::snprintf(message, capacity, "%s", text);
    }
}

BarcodeFormats CZXing_zxingFormats(uint32_t formats) {
    if (formats == 0) {
        formats = CZXING_FORMAT_AZTEC | CZXING_FORMAT_QR | CZXING_FORMAT_MICRO_QR | CZXING_FORMAT_DATA_MATRIX
                  | CZXING_FORMAT_PDF417;
    }
    // zxing 3 names symbologies and their variants; QR Code's models are asked for one by one so that a request
    // for QR alone does not also look for Micro QR (a variant of the same symbology there).
    std::vector<BarcodeFormat> result;
    if (formats & CZXING_FORMAT_AZTEC) result.push_back(BarcodeFormat::Aztec);
    if (formats & CZXING_FORMAT_QR) {
        result.push_back(BarcodeFormat::QRCodeModel1);
        result.push_back(BarcodeFormat::QRCodeModel2);
    }
    if (formats & CZXING_FORMAT_MICRO_QR) result.push_back(BarcodeFormat::MicroQRCode);
    if (formats & CZXING_FORMAT_DATA_MATRIX) result.push_back(BarcodeFormat::DataMatrix);
    if (formats & CZXING_FORMAT_PDF417) result.push_back(BarcodeFormat::PDF417);
    if (formats & CZXING_FORMAT_OTHER) {
        result.push_back(BarcodeFormat::AllLinear);
        result.push_back(BarcodeFormat::MaxiCode);
    }
    return BarcodeFormats(std::move(result));
}

uint32_t CZXing_ourFormat(BarcodeFormat format) {
    // Variants first: Micro QR is a variant of QR Code's symbology in zxing 3.
    if (format == BarcodeFormat::MicroQRCode) return CZXING_FORMAT_MICRO_QR;
    if (format <= BarcodeFormat::QRCode) return CZXING_FORMAT_QR;
    if (format <= BarcodeFormat::Aztec) return CZXING_FORMAT_AZTEC;
    if (format <= BarcodeFormat::DataMatrix) return CZXING_FORMAT_DATA_MATRIX;
    if (format <= BarcodeFormat::PDF417) return CZXING_FORMAT_PDF417;
    return CZXING_FORMAT_OTHER;
}

Binarizer CZXing_zxingBinarizer(int32_t binarizer) {
    switch (binarizer) {
    case CZXING_BINARIZER_GLOBAL_HISTOGRAM: return Binarizer::GlobalHistogram;
    case CZXING_BINARIZER_FIXED_THRESHOLD: return Binarizer::FixedThreshold;
    default: return Binarizer::LocalAverage;
    }
}

} // namespace

extern "C" CZXingReadOptions CZXing_defaultReadOptions(void) {
    CZXingReadOptions options;
    std::memset(&options, 0, sizeof options);
    options.tryHarder = 1;
    options.tryRotate = 1;
    options.tryDownscale = 1;
    options.binarizer = CZXING_BINARIZER_LOCAL_AVERAGE;
    return options;
}

extern "C" void CZXing_freeSymbols(CZXingSymbol *symbols, size_t count) {
    if (symbols == nullptr) return;
    for (size_t index = 0; index < count; index++) {
        std::free(symbols[index].bytes);
    }
    std::free(symbols);
}

extern "C" int CZXing_read(const uint8_t *luminance, int32_t width, int32_t height, int32_t rowStride,
                           const CZXingReadOptions *options, CZXingSymbol **symbols, size_t *count,
                           char *message, size_t messageCapacity) {
    if (symbols == nullptr || count == nullptr) {
        CZXing_setMessage(message, messageCapacity, "no place to store the results");
        return CZXING_ERROR_ARGUMENT;
    }
    *symbols = nullptr;
    *count = 0;
    if (luminance == nullptr || width <= 0 || height <= 0 || rowStride < width) {
        CZXing_setMessage(message, messageCapacity, "the image buffer or its dimensions are invalid");
        return CZXING_ERROR_ARGUMENT;
    }
    CZXingReadOptions chosen = options != nullptr ? *options : CZXing_defaultReadOptions();
    CZXingSymbol *output = nullptr;
    size_t produced = 0;
    try {
        ReaderOptions hints;
        // farecheck's own passes try the inverted image: off unless asked for, so that the cheap first pass stays
        // cheap (zxing 3 tries it by default).
        hints.setTryInvert(chosen.tryInvert != 0);
        hints.setFormats(CZXing_zxingFormats(chosen.formats))
            .setTryHarder(chosen.tryHarder != 0)
            .setTryRotate(chosen.tryRotate != 0)
            .setTryDownscale(chosen.tryDownscale != 0)
            .setIsPure(chosen.isPure != 0)
            .setBinarizer(CZXing_zxingBinarizer(chosen.binarizer));
        if (chosen.downscaleThreshold > 0) {
            hints.setDownscaleThreshold(static_cast<uint16_t>(std::min(chosen.downscaleThreshold, 65535)));
        }
        if (chosen.downscaleFactor >= 2 && chosen.downscaleFactor <= 4) {
            hints.setDownscaleFactor(static_cast<uint8_t>(chosen.downscaleFactor));
        }
        if (chosen.maxSymbols > 0) {
            hints.setMaxNumberOfSymbols(static_cast<uint8_t>(std::min(chosen.maxSymbols, 255)));
        }
        ImageView image(luminance, width, height, ImageFormat::Lum, rowStride);
        Barcodes results = ReadBarcodes(image, hints);

        size_t valid = 0;
        for (const Barcode &result : results) {
            if (result.isValid()) valid++;
        }
        if (valid == 0) return CZXING_OK;
        output = static_cast<CZXingSymbol *>(std::calloc(valid, sizeof(CZXingSymbol)));
        if (output == nullptr) throw std::bad_alloc();
        for (const Barcode &result : results) {
            if (!result.isValid()) continue;
            CZXingSymbol &symbol = output[produced];
            // bytes() is the content before any character set conversion and without ECI designators:
            // binary payloads (zlib data of UIC tickets, COSE of FC1) must reach the verifier unchanged.
            const std::vector<uint8_t> &content = result.bytes();
            symbol.byteCount = content.size();
            symbol.bytes = static_cast<uint8_t *>(std::malloc(content.size() > 0 ? content.size() : 1));
            if (symbol.bytes == nullptr) throw std::bad_alloc();
            if (!content.empty()) std::memcpy(symbol.bytes, content.data(), content.size());
            produced++;
            symbol.format = CZXing_ourFormat(result.format());
            const Position &position = result.position();
            for (int corner = 0; corner < 4; corner++) {
                symbol.corners[2 * corner] = position[corner].x;
                symbol.corners[2 * corner + 1] = position[corner].y;
            }
            symbol.orientation = result.orientation();
            symbol.hasECI = result.hasECI() ? 1 : 0;
        }
        *symbols = output;
        *count = produced;
        return CZXING_OK;
    } catch (const std::bad_alloc &) {
        CZXing_freeSymbols(output, produced);
        CZXing_setMessage(message, messageCapacity, "out of memory while decoding");
        return CZXING_ERROR_MEMORY;
    } catch (const std::exception &error) {
        CZXing_freeSymbols(output, produced);
        CZXing_setMessage(message, messageCapacity, error.what());
        return CZXING_ERROR_LIBRARY;
    } catch (...) {
        CZXing_freeSymbols(output, produced);
        CZXing_setMessage(message, messageCapacity, "zxing-cpp failed with an unknown exception");
        return CZXING_ERROR_LIBRARY;
    }
}

extern "C" void CZXing_freeMatrix(uint8_t *modules) {
    std::free(modules);
}

extern "C" int CZXing_write(const uint8_t *bytes, size_t byteCount, uint32_t format, int32_t eccLevel,
                            uint8_t **modules, int32_t *width, int32_t *height,
                            char *message, size_t messageCapacity) {
    if (modules == nullptr || width == nullptr || height == nullptr || (bytes == nullptr && byteCount > 0)) {
        CZXing_setMessage(message, messageCapacity, "invalid arguments");
        return CZXING_ERROR_ARGUMENT;
    }
    *modules = nullptr;
    *width = 0;
    *height = 0;
    BarcodeFormat zxingFormat;
    switch (format) {
    case CZXING_FORMAT_AZTEC: zxingFormat = BarcodeFormat::Aztec; break;
    case CZXING_FORMAT_QR: zxingFormat = BarcodeFormat::QRCode; break;
    default:
        CZXing_setMessage(message, messageCapacity, "only Aztec and QR can be written");
        return CZXING_ERROR_ARGUMENT;
    }
    if (eccLevel < -1 || eccLevel > 8) {
        CZXing_setMessage(message, messageCapacity, "error correction level must be -1 or 0...8");
        return CZXING_ERROR_ARGUMENT;
    }
    try {
        // zxing's old writers take text. Each byte becomes the code point of the same value and the BINARY
        // character set maps it back to that byte (ISO 8859-1 would refuse 0x80...0x9F); the Aztec writer adds no
        // ECI, so the symbol carries the bytes as they are.
        std::wstring contents(byteCount, L'\0');
        for (size_t index = 0; index < byteCount; index++) {
            contents[index] = static_cast<wchar_t>(bytes[index]);
        }
        // The old writer: zxing 3's CreateBarcode needs libzint, which the build leaves out (scripts/build-zxing.sh).
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
        MultiFormatWriter writer(zxingFormat);
#pragma clang diagnostic pop
        writer.setEncoding(CharacterSet::BINARY).setMargin(0);
        if (eccLevel >= 0) writer.setEccLevel(eccLevel);
        // Width and height 0: one pixel per module, no scaling.
        BitMatrix matrix = writer.encode(contents, 0, 0);
        const int matrixWidth = matrix.width();
        const int matrixHeight = matrix.height();
        if (matrixWidth <= 0 || matrixHeight <= 0) {
            CZXing_setMessage(message, messageCapacity, "zxing-cpp produced an empty symbol");
            return CZXING_ERROR_LIBRARY;
        }
        uint8_t *output = static_cast<uint8_t *>(std::malloc(static_cast<size_t>(matrixWidth) * matrixHeight));
        if (output == nullptr) throw std::bad_alloc();
        for (int y = 0; y < matrixHeight; y++) {
            for (int x = 0; x < matrixWidth; x++) {
                output[static_cast<size_t>(y) * matrixWidth + x] = matrix.get(x, y) ? 1 : 0;
            }
        }
        *modules = output;
        *width = matrixWidth;
        *height = matrixHeight;
        return CZXING_OK;
    } catch (const std::bad_alloc &) {
        CZXing_setMessage(message, messageCapacity, "out of memory while encoding");
        return CZXING_ERROR_MEMORY;
    } catch (const std::exception &error) {
        // For example "Data too large for an Aztec code".
        CZXing_setMessage(message, messageCapacity, error.what());
        return CZXING_ERROR_LIBRARY;
    } catch (...) {
        CZXing_setMessage(message, messageCapacity, "zxing-cpp failed with an unknown exception");
        return CZXING_ERROR_LIBRARY;
    }
}
