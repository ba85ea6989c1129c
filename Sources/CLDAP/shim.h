#ifndef FARECHECK_CLDAP_SHIM_H
#define FARECHECK_CLDAP_SHIM_H
// OpenLDAP's client library (libldap, libldap-dev): what Swift cannot reach of it directly (macros that are casts
// of pointers or of typedefs). Every function is prefixed with the module name and says in a line why it exists.
#include <lber.h>
#include <ldap.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <pthread.h>

/// An anonymous simple bind (empty name, empty password) in one call: LDAP_SASL_SIMPLE is a null `char *` macro,
/// which Swift does not import. Waits at most the handle's LDAP_OPT_TIMEOUT; returns an LDAP result code.
static inline int CLDAP_bindAnonymously(LDAP *ld) {
    struct berval empty = {0, NULL};
    return ldap_sasl_bind_s(ld, "", LDAP_SASL_SIMPLE, &empty, NULL, NULL, NULL);
}

/// Stops the handle from chasing referrals to other servers: LDAP_OPT_OFF is a `void *` macro Swift does not import.
static inline int CLDAP_setReferralsOff(LDAP *ld) {
    return ldap_set_option(ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
}

/// LDAP_SCOPE_SUBTREE is a cast to ber_int_t, which Swift does not import.
static inline int CLDAP_scopeSubtree(void) {
    return LDAP_SCOPE_SUBTREE;
}

/// Whether a message is a search entry, a search result (the end), or a reference: the LDAP_RES_* tags are casts
/// to ber_tag_t, which Swift does not import. Returns 1 entry, 2 result, 3 reference, 0 anything else.
static inline int CLDAP_searchMessageKind(LDAPMessage *message) {
    switch (ldap_msgtype(message)) {
    case LDAP_RES_SEARCH_ENTRY: return 1;
    case LDAP_RES_SEARCH_RESULT: return 2;
    case LDAP_RES_SEARCH_REFERENCE: return 3;
    default: return 0;
    }
}

/// Caps the size of one message the handle accepts from the server (an entry, with all its values), so that a
/// directory cannot make it buffer an unbounded answer: the cap lives on the handle's Sockbuf, which ber_sockbuf_ctrl
/// sets through a `void *`. Returns 0, or -1 when the handle has no Sockbuf.
static inline int CLDAP_setMaxIncomingBytes(LDAP *ld, ber_len_t bytes) {
    Sockbuf *sockbuf = NULL;
    if (ldap_get_option(ld, LDAP_OPT_SOCKBUF, &sockbuf) != LDAP_OPT_SUCCESS || sockbuf == NULL) return -1;
    return ber_sockbuf_ctrl(sockbuf, LBER_SB_OPT_SET_MAX_INCOMING, &bytes) == 1 ? 0 : -1;
}

/// What the handle's connect callback saw: its socket while it is open (so that a watchdog can cut a blocked call
/// short) and whether a TCP connection was made (so that a failed ldaps:// read is told apart: TLS, or not reached).
/// The callback first, so that libldap's pointer to it is a pointer to the whole.
typedef struct {
    struct ldap_conncb callback;
    pthread_mutex_t lock;
    int socket;
    int connections;
    int interrupted;
} CLDAP_Connection;

/// Notes a new connection's socket. Returns 0, libldap's "go on".
static inline int CLDAP_connectionAdd(LDAP *ld, Sockbuf *sb, LDAPURLDesc *srv, struct sockaddr *addr,
                                      struct ldap_conncb *ctx) {
    (void)ld;
    (void)srv;
    (void)addr;
    CLDAP_Connection *connection = (CLDAP_Connection *)ctx;
    ber_socket_t fd = -1;
    ber_sockbuf_ctrl(sb, LBER_SB_OPT_GET_FD, &fd);
    pthread_mutex_lock(&connection->lock);
    connection->socket = fd;
    connection->connections += 1;
    pthread_mutex_unlock(&connection->lock);
    return 0;
}

/// Forgets the socket before libldap closes it, and frees the record with its handle (libldap calls this with a null
/// Sockbuf just before it frees the handle).
static inline void CLDAP_connectionDelete(LDAP *ld, Sockbuf *sb, struct ldap_conncb *ctx) {
    (void)ld;
    CLDAP_Connection *connection = (CLDAP_Connection *)ctx;
    if (sb == NULL) {
        pthread_mutex_destroy(&connection->lock);
        free(connection);
        return;
    }
    pthread_mutex_lock(&connection->lock);
    connection->socket = -1;
    pthread_mutex_unlock(&connection->lock);
}

/// Records the handle's connections (see CLDAP_Connection): a connect callback is a struct of C function pointers
/// that must outlive the option, which Swift cannot make. Returns the record, which lives as long as the handle, or
/// NULL when libldap refused the callback.
static inline CLDAP_Connection *CLDAP_watchConnections(LDAP *ld) {
    CLDAP_Connection *connection = calloc(1, sizeof *connection);
    if (connection == NULL) return NULL;
    pthread_mutex_init(&connection->lock, NULL);
    connection->socket = -1;
    connection->callback.lc_add = CLDAP_connectionAdd;
    connection->callback.lc_del = CLDAP_connectionDelete;
    if (ldap_set_option(ld, LDAP_OPT_CONNECT_CB, &connection->callback) != LDAP_OPT_SUCCESS) {
        pthread_mutex_destroy(&connection->lock);
        free(connection);
        return NULL;
    }
    return connection;
}

/// Cuts short whatever call blocks on the connection's socket (shutdown, not close: libldap still owns the
/// descriptor): libldap reads the TLS handshake of ldaps:// with blocking calls that no timeout of its own bounds.
/// Only while the handle lives.
static inline void CLDAP_interruptConnection(CLDAP_Connection *connection) {
    pthread_mutex_lock(&connection->lock);
    if (connection->socket >= 0) shutdown(connection->socket, SHUT_RDWR);
    connection->interrupted = 1;
    pthread_mutex_unlock(&connection->lock);
}

/// Whether CLDAP_interruptConnection cut the handle's calls short.
static inline int CLDAP_connectionInterrupted(CLDAP_Connection *connection) {
    pthread_mutex_lock(&connection->lock);
    int interrupted = connection->interrupted;
    pthread_mutex_unlock(&connection->lock);
    return interrupted;
}

/// How many TCP connections the handle made.
static inline int CLDAP_connectionCount(CLDAP_Connection *connection) {
    pthread_mutex_lock(&connection->lock);
    int count = connection->connections;
    pthread_mutex_unlock(&connection->lock);
    return count;
}

#endif
