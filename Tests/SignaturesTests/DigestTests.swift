import Signatures
import Testing

/// Every signature check hashes first (SHA-1 and SHA-2 through OpenSSL's one-shot functions): a wrong digest would
/// call every genuine ticket forged. The FIPS 180-4 examples ("abc") and the empty message.
@Suite("Digests")
struct DigestTests {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    @Test("SHA-1, SHA-224, SHA-256, SHA-384 and SHA-512 of \"abc\" and of nothing are the standard's")
    func knownAnswers() {
        let abc = Array("abc".utf8)
        #expect(Self.hex(digest(.sha1, abc)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(Self.hex(digest(.sha224, abc)) == "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7")
        #expect(
            Self.hex(digest(.sha256, abc)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Self.hex(digest(.sha384, abc))
                == "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
                + "8086072ba1e7cc2358baeca134c825a7")
        #expect(
            Self.hex(digest(.sha512, abc))
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
        #expect(
            Self.hex(digest(.sha256, [])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        for algorithm in DigestAlgorithm.allCases {
            #expect(digest(algorithm, abc).count == algorithm.outputByteCount)
        }
    }
}
