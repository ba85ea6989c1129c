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

#endif
