// `openssl speed`'s verify loop (apps/speed.c: one EVP_PKEY_CTX made and initialised before the clock starts, then
// EVP_PKEY_verify on a fixed digest until the time is up) on a key given by the caller. See COpenSSLSpeedLoop.h.

#include "COpenSSLSpeedLoop.h"

#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <time.h>

static double thread_cpu_seconds(void) {
    struct timespec time;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time);
    return (double)time.tv_sec + (double)time.tv_nsec / 1e9;
}

static int run_once(COpenSSLSpeedLoopOperation operation, EVP_PKEY_CTX *context, const uint8_t *signature,
                    size_t signature_count, const uint8_t *digest, size_t digest_count, uint8_t *output,
                    size_t output_capacity) {
    if (operation == COpenSSLSpeedLoopRSAPublic) {
        size_t output_count = output_capacity;
        return EVP_PKEY_verify_recover(context, output, &output_count, signature, signature_count) == 1;
    }
    return EVP_PKEY_verify(context, signature, signature_count, digest, digest_count) == 1;
}

// The EC_KEY functions are deprecated in OpenSSL 3; they are still its cheapest way to a key from a bare point.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
static int verify_new_point(const EC_GROUP *group, const uint8_t *point, size_t point_count,
                            const uint8_t *signature, size_t signature_count, const uint8_t *digest,
                            size_t digest_count) {
    EC_KEY *key = EC_KEY_new();
    if (key == NULL) return 0;
    int valid = EC_KEY_set_group(key, group) == 1 && EC_KEY_oct2key(key, point, point_count, NULL) == 1
        && ECDSA_verify(0, digest, (int)digest_count, signature, (int)signature_count, key) == 1;
    EC_KEY_free(key);
    return valid;
}

static double new_point_rate(const uint8_t *point, size_t point_count, const uint8_t *signature,
                             size_t signature_count, const uint8_t *digest, size_t digest_count, double seconds) {
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    if (group == NULL) return -1;
    double rate = -1;
    for (int index = 0; index < 20; index++) {
        if (!verify_new_point(group, point, point_count, signature, signature_count, digest, digest_count))
            goto done;
    }
    double start = thread_cpu_seconds();
    long count = 0;
    while (thread_cpu_seconds() - start < seconds) {
        for (int index = 0; index < 20; index++)
            verify_new_point(group, point, point_count, signature, signature_count, digest, digest_count);
        count += 20;
    }
    rate = (double)count / (thread_cpu_seconds() - start);
done:
    EC_GROUP_free(group);
    return rate;
}
#pragma clang diagnostic pop

double copenssl_speed_loop_rate(
    COpenSSLSpeedLoopOperation operation, const uint8_t *spki, size_t spki_count, const uint8_t *signature,
    size_t signature_count, const uint8_t *digest, size_t digest_count, double seconds) {
    if (operation == COpenSSLSpeedLoopVerifyNewPoint)
        return new_point_rate(spki, spki_count, signature, signature_count, digest, digest_count, seconds);
    const unsigned char *cursor = spki;
    EVP_PKEY *key = d2i_PUBKEY(NULL, &cursor, (long)spki_count);
    if (key == NULL) return -1;
    double rate = -1;
    uint8_t output[2048];
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    if (context == NULL) goto done;
    int ready = operation == COpenSSLSpeedLoopRSAPublic ? EVP_PKEY_verify_recover_init(context)
                                                        : EVP_PKEY_verify_init(context);
    if (ready != 1) goto done;
    if (operation == COpenSSLSpeedLoopRSAPublic && EVP_PKEY_CTX_set_rsa_padding(context, RSA_NO_PADDING) != 1) goto done;
    if (operation == COpenSSLSpeedLoopVerifyPSS) {
        if (EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) != 1
            || EVP_PKEY_CTX_set_signature_md(context, EVP_sha256()) != 1
            || EVP_PKEY_CTX_set_rsa_mgf1_md(context, EVP_sha256()) != 1
            || EVP_PKEY_CTX_set_rsa_pss_saltlen(context, RSA_PSS_SALTLEN_DIGEST) != 1)
            goto done;
    }
    // Warm-up, and a check that the operation succeeds (a failing one would time an error path).
    for (int index = 0; index < 20; index++) {
        if (!run_once(operation, context, signature, signature_count, digest, digest_count, output, sizeof output))
            goto done;
    }
    double start = thread_cpu_seconds();
    long count = 0;
    while (thread_cpu_seconds() - start < seconds) {
        for (int index = 0; index < 20; index++)
            run_once(operation, context, signature, signature_count, digest, digest_count, output, sizeof output);
        count += 20;
    }
    rate = (double)count / (thread_cpu_seconds() - start);
done:
    EVP_PKEY_CTX_free(context);
    EVP_PKEY_free(key);
    return rate;
}
