/// Decodes complete ASN.1 unaligned PER encodings against a schema declared as `PERType` data.
public enum PERDecoder {
    /// Decodes `bytes` as one value of `type`.
    ///
    /// The value must fit in the bytes; bits left after it are padding (an encoding is padded to whole
    /// octets) and must number fewer than 8, else the data is not one value of this type.
    ///
    /// - Parameter subject: what the bytes are, for error messages, e.g. `the U_FLEX record at byte 153`; built
    ///   only when there is an error.
    /// - Throws: `malformed` naming `subject`, the bit offset (from the first bit of `bytes`) and the field
    ///   path, e.g. `transportDocument[0].ticket.openTicket.validFromDay`.
    public static func decode(
        _ bytes: [UInt8], as type: PERType, subject: @autoclosure () -> String = "the PER data"
    ) throws(FormatError) -> PERValue {
        var reader = PERBitReader(bytes)
        do throws(PERFailure) {
            let value = try reader.value(type)
            guard reader.remainingBits < 8 else {
                throw PERFailure(
                    bitOffset: reader.position,
                    reason: "\(reader.remainingBits / 8) octets follow the end of the value"
                )
            }
            return value
        } catch {
            throw error.formatError(subject: subject())
        }
    }
}
