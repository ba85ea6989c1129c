#ifndef FARECHECK_COPENSSL_SHIM_H
#define FARECHECK_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/err.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/rsa.h>
#include <openssl/dsa.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/sha.h>
#include <openssl/rand.h>
#include <openssl/param_build.h>
#include <openssl/kdf.h>
#include <openssl/hmac.h>

/// SHA-1 of a short message with the low-level functions: half the time of EVP_Digest, whose provider
/// dispatch and context costs more than hashing the ~140 bytes of a VDV ticket. They are deprecated in
/// OpenSSL 3 in favour of EVP (for provider selection, which a fixed SHA-1 does not need); the warning is
/// silenced here only.
static inline void COpenSSL_SHA1(const unsigned char *data, size_t count, unsigned char *out) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    SHA_CTX context;
    SHA1_Init(&context);
    SHA1_Update(&context, data, count);
    SHA1_Final(out, &context);
    OPENSSL_cleanse(&context, sizeof context);
#pragma clang diagnostic pop
}

/// A SHA-2 digest of a message in one call, with the low-level functions (see COpenSSL_SHA1): every ECDSA and DSA
/// verdict hashes its few hundred signed bytes, where EVP_Digest's context and dispatch cost as much as the hashing.
/// `output_count` picks the function (28, 32, 48 or 64 bytes); returns 0 for another, 1 when `out` holds the digest.
static inline int COpenSSL_SHA2(size_t output_count, const unsigned char *data, size_t count, unsigned char *out) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    // The context functions, not the one-shot SHA256() and the like: OpenSSL 3 makes those fetch the digest by name
    // (EVP_Q_digest) on every call.
    if (output_count == 28 || output_count == 32) {
        SHA256_CTX context;
        if (output_count == 28) SHA224_Init(&context); else SHA256_Init(&context);
        SHA256_Update(&context, data, count);
        SHA256_Final(out, &context);
        OPENSSL_cleanse(&context, sizeof context);
        return 1;
    }
    if (output_count == 48 || output_count == 64) {
        SHA512_CTX context;
        if (output_count == 48) SHA384_Init(&context); else SHA512_Init(&context);
        SHA512_Update(&context, data, count);
        SHA512_Final(out, &context);
        OPENSSL_cleanse(&context, sizeof context);
        return 1;
    }
    return 0;
#pragma clang diagnostic pop
}

/// SHA-256 of up to three parts laid end to end, with the low-level functions (see COpenSSL_SHA1): RSASSA-PSS
/// verification hashes eight zero bytes ‖ the message digest ‖ the salt, and MGF1 hashes H ‖ a counter, each a
/// block or two, where EVP's dispatch would cost as much as the hashing.
static inline void COpenSSL_SHA256_parts(const unsigned char *a, size_t a_count, const unsigned char *b,
                                         size_t b_count, const unsigned char *c, size_t c_count,
                                         unsigned char *out) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    SHA256_CTX context;
    SHA256_Init(&context);
    if (a_count) SHA256_Update(&context, a, a_count);
    if (b_count) SHA256_Update(&context, b, b_count);
    if (c_count) SHA256_Update(&context, c, c_count);
    SHA256_Final(out, &context);
#pragma clang diagnostic pop
}

/// An EC public key on `group` from a SEC1 point (compressed or not), or NULL when the point is not on the curve.
///
/// A key that a barcode brings along (DOSIPAS's level-2 key) is checked once or twice and dropped: through
/// `EVP_PKEY_fromdata` OpenSSL 3 builds the curve's group again for every key (its constants, a Montgomery
/// context) and then a verify context, three times the cost of this key on a group built once. The EC_KEY
/// functions are deprecated in OpenSSL 3 in favour of that path; the warning is silenced here only.
static inline EC_KEY *COpenSSL_EC_KEY_from_point(const EC_GROUP *group, const unsigned char *point, size_t count) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    EC_KEY *key = EC_KEY_new();
    if (key == NULL) return NULL;
    if (EC_KEY_set_group(key, group) != 1 || EC_KEY_oct2key(key, point, count, NULL) != 1) {
        EC_KEY_free(key);
        return NULL;
    }
    return key;
#pragma clang diagnostic pop
}

/// An EVP_PKEY holding its own reference to `key` (see COpenSSL_EC_KEY_from_point), or NULL.
static inline EVP_PKEY *COpenSSL_EVP_PKEY_holding_EC_KEY(EC_KEY *key) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    EVP_PKEY *pkey = EVP_PKEY_new();
    if (pkey == NULL) return NULL;
    if (EVP_PKEY_set1_EC_KEY(pkey, key) != 1) {
        EVP_PKEY_free(pkey);
        return NULL;
    }
    return pkey;
#pragma clang diagnostic pop
}

/// ECDSA_do_verify on r and s as unsigned big-endian magnitudes (see COpenSSL_EC_KEY_from_point): 1 valid, 0 not
/// valid, -1 an error. What ECDSA_verify and EVP_PKEY_verify do after decoding their DER, without the DER: tickets
/// carry raw r ‖ s (or DER that was parsed already), and the DER round trip (encode here, decode and encode again
/// there to compare) cost more than a microsecond a check.
static inline int COpenSSL_ECDSA_verify_integers(const unsigned char *digest, size_t digest_count,
                                                 const unsigned char *r, size_t r_count, const unsigned char *s,
                                                 size_t s_count, EC_KEY *key) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    if (digest_count > 64 || r_count > 2048 || s_count > 2048) return 0;
    ECDSA_SIG *signature = ECDSA_SIG_new();
    if (signature == NULL) return -1;
    BIGNUM *r_number = BN_bin2bn(r, (int)r_count, NULL);
    BIGNUM *s_number = BN_bin2bn(s, (int)s_count, NULL);
    if (r_number == NULL || s_number == NULL || ECDSA_SIG_set0(signature, r_number, s_number) != 1) {
        BN_free(r_number);
        BN_free(s_number);
        ECDSA_SIG_free(signature);
        return -1;
    }
    int result = ECDSA_do_verify(digest, (int)digest_count, signature, key);
    ECDSA_SIG_free(signature);
    return result;
#pragma clang diagnostic pop
}

/// The EC_KEY inside an EC `pkey` (a reference of its own, for COpenSSL_ECDSA_verify_integers), or NULL.
static inline EC_KEY *COpenSSL_EC_KEY_of(EVP_PKEY *pkey) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    return EVP_PKEY_get1_EC_KEY(pkey);
#pragma clang diagnostic pop
}

static inline void COpenSSL_EC_KEY_free(EC_KEY *key) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    EC_KEY_free(key);
#pragma clang diagnostic pop
}

/// OPENSSL_free is a macro (it passes __FILE__/__LINE__), so Swift cannot call it.
static inline void COpenSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}

/// BIO_get_mem_data is a macro over BIO_ctrl with a char** out-parameter, which Swift cannot call.
static inline long COpenSSL_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

/// XN_FLAG_ONELINE and its parts are nested macro expressions Swift does not import; these are the
/// flags `openssl x509 -subject` prints with (one line, UTF-8 kept as UTF-8).
static inline unsigned long COpenSSL_XN_FLAG_ONELINE_UTF8(void) {
    return (XN_FLAG_ONELINE | ASN1_STRFLGS_UTF8_CONVERT) & ~ASN1_STRFLGS_ESC_MSB;
}

/// EVP_PKEY_PUBLIC_KEY is a nested macro expression Swift does not import: the selection for
/// EVP_PKEY_fromdata that builds a public key (parameters and public part).
static inline int COpenSSL_EVP_PKEY_PUBLIC_KEY(void) {
    return EVP_PKEY_PUBLIC_KEY;
}

/// OSSL_PARAM_BLD keeps the parameter name pointer until OSSL_PARAM_BLD_to_param, so the names must be
/// C strings with static storage, not Swift's temporary bridges of the imported macro strings.
static inline const char *COpenSSL_PKEY_PARAM_RSA_N(void) {
    return OSSL_PKEY_PARAM_RSA_N;
}

static inline const char *COpenSSL_PKEY_PARAM_RSA_E(void) {
    return OSSL_PKEY_PARAM_RSA_E;
}

/// scrypt through OpenSSL 3's EVP_KDF "SCRYPT". The OSSL_PARAM array is built here because its entries point at
/// the arguments and at the parameter names' static strings, which Swift's temporary bridges would not keep alive;
/// N and maxmem are uint64 and r and p uint32, as the provider reads them. Returns 1 on success, 0 otherwise.
static inline int COpenSSL_scrypt(const unsigned char *password, size_t passwordLength, const unsigned char *salt,
                                  size_t saltLength, uint64_t n, uint32_t r, uint32_t p, uint64_t maxMemory,
                                  unsigned char *out, size_t outLength) {
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "SCRYPT", NULL);
    if (kdf == NULL) return 0;
    EVP_KDF_CTX *context = EVP_KDF_CTX_new(kdf);
    EVP_KDF_free(kdf);
    if (context == NULL) return 0;
    OSSL_PARAM params[7];
    params[0] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD, (void *)password, passwordLength);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, saltLength);
    params[2] = OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_N, &n);
    params[3] = OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_R, &r);
    params[4] = OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_P, &p);
    params[5] = OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_MAXMEM, &maxMemory);
    params[6] = OSSL_PARAM_construct_end();
    int ok = EVP_KDF_derive(context, out, outLength, params);
    EVP_KDF_CTX_free(context);
    return ok;
}

#endif
