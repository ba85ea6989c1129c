import CZBar
import FareCore

/// zbar 0.23 for QR codes: a second opinion that finds some codes zxing misses, and the other way round.
enum ZBarEngine {
    /// zbar's four-character code for 8-bit grey ("Y800"); `zbar_fourcc` is a macro Swift cannot call.
    private static let greyFourCC: UInt = 0x3030_3859

    /// Every QR code zbar finds; `testInverted` also tries light-on-dark codes.
    static func read(_ image: GrayImage, testInverted: Bool = false) -> [EngineSymbol] {
        guard let scanner = zbar_image_scanner_create() else { return [] }
        defer { zbar_image_scanner_destroy(scanner) }
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1)
        // Without this zbar converts QR bytes to UTF-8 text, which breaks binary payloads.
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1)
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_POSITION, 1)
        if testInverted {
            zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_TEST_INVERTED, 1)
        }
        guard let zbarImage = zbar_image_create() else { return [] }
        defer { zbar_image_destroy(zbarImage) }
        zbar_image_set_format(zbarImage, greyFourCC)
        zbar_image_set_size(zbarImage, UInt32(image.width), UInt32(image.height))

        return image.pixels.withUnsafeBufferPointer { pixels -> [EngineSymbol] in
            // No cleanup handler: zbar only borrows the pixels for the duration of this closure.
            zbar_image_set_data(zbarImage, pixels.baseAddress, UInt(pixels.count), nil)
            defer { zbar_image_set_data(zbarImage, nil, 0, nil) }
            guard zbar_scan_image(scanner, zbarImage) > 0 else { return [] }
            var found: [EngineSymbol] = []
            var symbol = zbar_image_first_symbol(zbarImage)
            while let current = symbol {
                if zbar_symbol_get_type(current) == ZBAR_QRCODE {
                    let length = Int(zbar_symbol_get_data_length(current))
                    var bytes: [UInt8] = []
                    if length > 0, let data = zbar_symbol_get_data(current) {
                        bytes = data.withMemoryRebound(to: UInt8.self, capacity: length) {
                            Array(UnsafeBufferPointer(start: $0, count: length))
                        }
                    }
                    let points = Int(zbar_symbol_get_loc_size(current))
                    let corners = (0..<points).map { index in
                        SymbolPoint(
                            x: Int(zbar_symbol_get_loc_x(current, UInt32(index))),
                            y: Int(zbar_symbol_get_loc_y(current, UInt32(index))))
                    }
                    found.append(EngineSymbol(symbology: .qr, bytes: bytes, corners: corners))
                }
                symbol = zbar_symbol_next(current)
            }
            return found
        }
    }
}
