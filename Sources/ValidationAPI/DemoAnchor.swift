// The text of Keys/demo-anchor.pub.pem (a test checks they match). DEMO anchor: its private key is published.

/// The demo trust anchor embedded in the binary, so that a demo validator pins it without files.
public enum DemoAnchor {
    /// The anchor's key id (first 8 bytes of SHA-256 over the SPKI DER, hex).
    public static let id = "520513aeec6a021c"

    /// The public key, exactly as in `Keys/demo-anchor.pub.pem`.
    public static let publicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEMxet5EDBm3uwtZrwTyjyMG9a84Ep
        oRQQMN4ghkDfL4wFMNkuHBI5ZXKd7W1MW8y8NiNK5DaRDgtJ90ESA97AUQ==
        -----END PUBLIC KEY-----
        """ + "\n"
}
