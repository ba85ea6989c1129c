/// COSE algorithm identifiers (RFC 9053) that FC1 tickets use.
public enum COSEAlgorithm: Int64, Sendable, CaseIterable {
    case es256 = -7
    case edDSA = -8
    case ps256 = -37

    /// The name used on the command line and in key listings.
    public var name: String {
        switch self {
        case .es256: "ES256"
        case .edDSA: "EdDSA"
        case .ps256: "PS256"
        }
    }

    /// Parses `ES256`, `EdDSA`, `PS256` (any case).
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        self = match
    }
}

/// A COSE_Sign1 message (RFC 9052 §4.2) taken apart, its signature not yet checked.
public struct COSESign1: Sendable {
    /// The protected header exactly as carried: the signature covers these bytes, not a re-encoding.
    public var protectedHeaderBytes: [UInt8]
    /// The decoded protected header map.
    public var protectedHeader: CBOR
    /// The unprotected header map.
    public var unprotectedHeader: CBOR
    /// The payload bytes (the CWT claims), exactly as carried.
    public var payload: [UInt8]
    /// The signature bytes.
    public var signature: [UInt8]

    /// The `alg` value (label 1) of the protected header, when present and an integer.
    public var algorithmID: Int64? { protectedHeader[.unsigned(1)]?.intValue }

    /// The `kid` (label 4): from the protected header, else from the unprotected one.
    public var keyID: [UInt8]? {
        for header in [protectedHeader, unprotectedHeader] {
            if case .bytes(let kid) = header[.unsigned(4)] { return kid }
        }
        return nil
    }

    /// The bytes the signature is computed over: `["Signature1", protected, h'', payload]`.
    public var signedBytes: [UInt8] {
        Self.sigStructure(protectedHeaderBytes: protectedHeaderBytes, payload: payload)
    }

    /// The Sig_structure for a protected header and payload, with empty external AAD.
    ///
    /// Written by hand rather than through `CBOREncoder`: this is on the verify hot path.
    public static func sigStructure(protectedHeaderBytes: [UInt8], payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + protectedHeaderBytes.count + 24)
        out.append(0x84)
        out.append(0x6A)
        out.append(contentsOf: Array("Signature1".utf8))
        appendByteStringHead(protectedHeaderBytes.count, into: &out)
        out.append(contentsOf: protectedHeaderBytes)
        out.append(0x40)
        appendByteStringHead(payload.count, into: &out)
        out.append(contentsOf: payload)
        return out
    }

    private static func appendByteStringHead(_ count: Int, into out: inout [UInt8]) {
        switch count {
        case 0..<24: out.append(0x40 | UInt8(count))
        case 24...0xFF:
            out.append(0x58)
            out.append(UInt8(count))
        case 0x100...0xFFFF:
            out.append(0x59)
            out.append(UInt8(count >> 8))
            out.append(UInt8(count & 0xFF))
        default:
            out.append(0x5A)
            for shift in [24, 16, 8, 0] { out.append(UInt8((count >> shift) & 0xFF)) }
        }
    }

    /// Takes a COSE_Sign1 apart (tagged with 18 or untagged), checking every type on the way.
    public init(decoding bytes: [UInt8]) throws(FormatError) {
        var item = try CBORDecoder.decode(bytes)
        if case .tagged(let tag, let inner) = item {
            guard tag == 18 else {
                throw .unsupported("COSE message has tag \(tag); only COSE_Sign1 (tag 18) is supported")
            }
            item = inner
        }
        guard case .array(let parts) = item else {
            throw .malformed("COSE_Sign1 must be an array, found a \(item.typeName)")
        }
        guard parts.count == 4 else { throw .malformed("COSE_Sign1 must have 4 elements, found \(parts.count)") }
        guard case .bytes(let protectedBytes) = parts[0] else {
            throw .malformed("COSE protected header must be a byte string, found a \(parts[0].typeName)")
        }
        let protectedMap: CBOR = protectedBytes.isEmpty ? .map([]) : try CBORDecoder.decode(protectedBytes)
        guard protectedMap.mapPairs != nil else {
            throw .malformed("COSE protected header must hold a map, found a \(protectedMap.typeName)")
        }
        guard parts[1].mapPairs != nil else {
            throw .malformed("COSE unprotected header must be a map, found a \(parts[1].typeName)")
        }
        guard case .bytes(let payload) = parts[2] else {
            throw .malformed(
                "COSE payload must be a byte string (detached payloads are not tickets), found a \(parts[2].typeName)")
        }
        guard case .bytes(let signature) = parts[3] else {
            throw .malformed("COSE signature must be a byte string, found a \(parts[3].typeName)")
        }
        self.protectedHeaderBytes = protectedBytes
        self.protectedHeader = protectedMap
        self.unprotectedHeader = parts[1]
        self.payload = payload
        self.signature = signature
    }

    /// Builds a message from its parts; `sign` receives the Sig_structure bytes and returns the signature.
    public static func sign<E: Error>(
        algorithm: COSEAlgorithm, keyID: [UInt8], payload: [UInt8], sign: ([UInt8]) throws(E) -> [UInt8]
    ) throws(E) -> [UInt8] {
        let protected = CBOREncoder.encode(
            .map([(.unsigned(1), .int(algorithm.rawValue)), (.unsigned(4), .bytes(keyID))]))
        let signature = try sign(sigStructure(protectedHeaderBytes: protected, payload: payload))
        return CBOREncoder.encode(
            .tagged(18, .array([.bytes(protected), .map([]), .bytes(payload), .bytes(signature)])))
    }
}
