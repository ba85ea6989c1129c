// `openssl speed`'s verify loop for a key it has no figure for (a DSA key with a 224- or 256-bit q, an RSA key with
// another public exponent, RSASSA-PSS): the same calls on the key a format really uses, so that a format's verdict
// can be compared with the bare operation of its own key. Benchmark code: no product of farecheck links it.
#ifndef COPENSSL_SPEED_LOOP_H
#define COPENSSL_SPEED_LOOP_H

#include <stddef.h>
#include <stdint.h>

/// What one call of the loop does with the key.
typedef enum {
    /// `EVP_PKEY_verify` of a DER signature (ECDSA, DSA) over a digest, as `openssl speed ecdsap256|dsa2048` does.
    COpenSSLSpeedLoopVerify = 0,
    /// `EVP_PKEY_verify` of an RSASSA-PSS signature over a SHA-256 digest (salt as long as the digest, MGF1 SHA-256).
    COpenSSLSpeedLoopVerifyPSS = 1,
    /// The RSA public operation alone (`EVP_PKEY_verify_recover`, no padding), as `openssl speed rsa1024` performs it
    /// before its PKCS#1 check.
    COpenSSLSpeedLoopRSAPublic = 2,
    /// ECDSA under a key OpenSSL has not seen: for every check the key is made anew from its SEC1 point (passed as
    /// `spki`) on a P-256 group made once (`EC_KEY_new`, `EC_KEY_set_group`, `EC_KEY_oct2key`: a compressed point
    /// costs a modular square root), then `ECDSA_verify`: OpenSSL's cheapest check of a signature under a key that a
    /// barcode brings (DOSIPAS's level-2 key, a new one per passenger).
    COpenSSLSpeedLoopVerifyNewPoint = 3,
} COpenSSLSpeedLoopOperation;

/// Runs `operation` with the key `spki` (DER SubjectPublicKeyInfo) on `signature` and `digest` for about `seconds`
/// of the calling thread's CPU time, one context prepared once (as `openssl speed` does), and returns operations per
/// CPU second; a negative value when the key does not load or an operation fails (the figure would time an error
/// path). For `COpenSSLSpeedLoopRSAPublic`, `signature` is the input (as long as the modulus) and `digest` unused.
double copenssl_speed_loop_rate(
    COpenSSLSpeedLoopOperation operation, const uint8_t *spki, size_t spki_count, const uint8_t *signature,
    size_t signature_count, const uint8_t *digest, size_t digest_count, double seconds);

#endif
