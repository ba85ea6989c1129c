/// The TLS both ends of the API speak: TLS 1.2 or 1.3, and in TLS 1.2 only the suites with an ephemeral key
/// exchange (ECDHE: forward secrecy) and an AEAD cipher (AES-GCM, ChaCha20-Poly1305).
///
/// Left out are the CBC suites with SHA-1 MACs (padding-oracle and timing attacks such as Lucky Thirteen) and
/// static RSA key exchange (a stolen server key decrypts recorded traffic). TLS 1.3's suites are all AEAD and are
/// not configurable. Every validator and server of this project speaks TLS 1.3 or one of these suites, so nothing
/// of ours is left out.
public enum TransportSecurity {
    /// The IANA names of the TLS 1.2 cipher suites allowed, most preferred first; BoringSSL (swift-nio-ssl)
    /// reads them in a cipher list.
    public static let tls12CipherSuites = [
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    ]

    /// `tls12CipherSuites` as a cipher list (`TLSConfiguration.cipherSuites`).
    public static var tls12CipherList: String { tls12CipherSuites.joined(separator: ":") }
}
