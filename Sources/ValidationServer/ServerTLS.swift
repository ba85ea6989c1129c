import Foundation
import NIOSSL
import ValidationAPI

/// The TLS settings of the reference server, read from PEM files.
public enum ServerTLS {
    /// Reads the server's certificate chain and key, and optionally the CA whose client certificates are required
    /// (mutual TLS), into a NIOSSL server configuration; the key is checked against the certificate.
    ///
    /// - Parameters:
    ///   - certificateFile: The server certificate (PEM), leaf first, then any intermediates.
    ///   - keyFile: The server certificate's private key (PEM).
    ///   - clientCAFile: A PEM bundle of the CAs that issue client certificates; when given, a client without a
    ///     certificate issued by one of them cannot complete the handshake.
    /// - Throws: `ServerError` with code `.invalidInput` naming the file at fault.
    public static func configuration(
        certificateFile: String, keyFile: String, clientCAFile: String? = nil
    ) throws(ServerError) -> TLSConfiguration {
        let chain = try certificates(certificateFile, option: "--tls-cert")
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: try readable(keyFile, option: "--tls-key"), format: .pem)
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError(
                code: .invalidInput, message: "--tls-key \(keyFile): not a PEM private key (\(error)).", cause: error)
        }
        var configuration: TLSConfiguration
        if let clientCAFile {
            let roots = try certificates(clientCAFile, option: "--client-ca")
            configuration = TLSConfiguration.makeServerConfigurationWithMTLS(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key),
                trustRoots: .certificates(roots))
            configuration.sendCANameList = true
        } else {
            configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        }
        // TLS 1.2 with ECDHE and AEAD suites only, or TLS 1.3 (see `TransportSecurity`).
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuites = TransportSecurity.tls12CipherList
        do {
            // Building a context checks that the key belongs to the certificate.
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ServerError(
                code: .invalidInput,
                message: "--tls-key \(keyFile) does not belong to the certificate in --tls-cert \(certificateFile), "
                    + "or they cannot be used together (\(error)).",
                cause: error)
        }
        return configuration
    }

    private static func readable(_ path: String, option: String) throws(ServerError) -> String {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ServerError(
                code: .invalidInput, message: "\(option) \(path): cannot read the file (missing, or not readable).")
        }
        return path
    }

    private static func certificates(_ path: String, option: String) throws(ServerError) -> [NIOSSLCertificate] {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(try readable(path, option: option))
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError(
                code: .invalidInput, message: "\(option) \(path): not a PEM certificate file (\(error)).", cause: error)
        }
        guard !certificates.isEmpty else {
            throw ServerError(code: .invalidInput, message: "\(option) \(path): holds no PEM certificate.")
        }
        return certificates
    }
}
