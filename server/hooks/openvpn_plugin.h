/* server/hooks/openvpn_plugin.h: the binary interface of OpenVPN plugins (version 3 of the argument
 * structures, "struct version" 5, with the v1/v2 entry points older plugins export), written
 * from the documented interface so that plugins built for openvpn 2.6, such as Debian's
 * openvpn-plugin-auth-pam.so, load into ovpnd unchanged. Only the layout and the numbers are
 * fixed by that interface; the names here are ovpnd's.
 *
 * A plugin is a shared object exporting, by these symbol names:
 *   openvpn_plugin_open_v3 / _v2 / _v1   start: argv, envp in; handle and the event mask out
 *   openvpn_plugin_func_v3 / _v2 / _v1   one event; returns OVPN_PLUGIN_FUNC_*
 *   openvpn_plugin_close_v1              (required) end
 *   openvpn_plugin_abort_v1              (optional) the server is going down abnormally
 *   openvpn_plugin_client_constructor_v1 (optional) a per-client context: called with the handle
 *                                        for each client instance (and once for the server's
 *                                        own); what it returns is the per_client_context of
 *                                        every later call for that instance
 *   openvpn_plugin_client_destructor_v1  (optional) that context's end, when the instance goes
 * The newest version of open and of func that the object exports is used (openvpn 2.6
 * plugin.c, plugin_init_item and plugin_call_item). argv[0] of every call is the plugin path
 * as written in the config; for open the `plugin` line's arguments follow. envp is a
 * NULL-terminated array of "NAME=value" strings.
 */
#ifndef SERVER_HOOKS_OPENVPN_PLUGIN_H
#define SERVER_HOOKS_OPENVPN_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>

/* Event types (the bit 1 << type in the mask a plugin returns from open). */
enum ovpn_plugin_event {
    OVPN_PLUGIN_UP = 0,
    OVPN_PLUGIN_DOWN = 1,
    OVPN_PLUGIN_ROUTE_UP = 2,
    OVPN_PLUGIN_IPCHANGE = 3,
    OVPN_PLUGIN_TLS_VERIFY = 4,
    OVPN_PLUGIN_AUTH_USER_PASS_VERIFY = 5,
    OVPN_PLUGIN_CLIENT_CONNECT = 6,
    OVPN_PLUGIN_CLIENT_DISCONNECT = 7,
    OVPN_PLUGIN_LEARN_ADDRESS = 8,
    OVPN_PLUGIN_CLIENT_CONNECT_V2 = 9,
    OVPN_PLUGIN_TLS_FINAL = 10,
    /* 11 is unused */
    OVPN_PLUGIN_ROUTE_PREDOWN = 12,
    OVPN_PLUGIN_CLIENT_CONNECT_DEFER = 13,
    OVPN_PLUGIN_CLIENT_CONNECT_DEFER_V2 = 14,
    OVPN_PLUGIN_CLIENT_CRRESPONSE = 15,
    OVPN_PLUGIN_N_EVENTS = 16,
};

/* Return codes of open_v3 and of every func. */
#define OVPN_PLUGIN_FUNC_SUCCESS 0
#define OVPN_PLUGIN_FUNC_ERROR 1
#define OVPN_PLUGIN_FUNC_DEFERRED 2 /* the answer comes later through auth_control_file */

#define OVPN_PLUGIN_STRUCT_VERSION                                                                 \
    5 /* what ovpnd passes as the version argument of the v3 calls                                 \
       */

/* Log flags of the plugin_log callback. */
#define OVPN_PLOG_ERR (1 << 0)
#define OVPN_PLOG_WARN (1 << 1)
#define OVPN_PLOG_NOTE (1 << 2)
#define OVPN_PLOG_DEBUG (1 << 3)
#define OVPN_PLOG_ERRNO (1 << 8) /* append strerror(errno) */
#define OVPN_PLOG_NOMUTE (1 << 9)

/* Which TLS library the server uses (tells a plugin what current_cert points to). */
enum ovpn_plugin_ssl_api {
    OVPN_PLUGIN_SSLAPI_NONE = 0, /* ovpnd: no certificate object is handed to plugins */
    OVPN_PLUGIN_SSLAPI_OPENSSL = 1,
    OVPN_PLUGIN_SSLAPI_MBEDTLS = 2,
};

/* A singly linked list of name/value pairs a plugin may return (allocated by the plugin with
 * malloc; the server frees each node, name and value). */
struct ovpn_plugin_string_list {
    struct ovpn_plugin_string_list *next;
    char *name;
    char *value;
};

/* Services the server offers to v3 plugins. */
struct ovpn_plugin_callbacks {
    void (*plugin_log)(int flags, const char *plugin_name, const char *format, ...);
    void (*plugin_vlog)(int flags, const char *plugin_name, const char *format, va_list ap);
    void (*plugin_secure_memzero)(void *data, size_t len);
    /* base64 of size bytes into a malloc'ed NUL-terminated *str; returns its length or -1 */
    int (*plugin_base64_encode)(const void *data, int size, char **str);
    /* decode str into data (size bytes); returns the decoded length or -1 */
    int (*plugin_base64_decode)(const char *str, void *data, int size);
};

struct ovpn_plugin_open_in {
    int type_mask; /* the events the server can call */
    const char **argv;
    const char **envp;
    struct ovpn_plugin_callbacks *callbacks;
    int ssl_api; /* enum ovpn_plugin_ssl_api */
    const char *ovpn_version;
    unsigned int ovpn_version_major;
    unsigned int ovpn_version_minor;
    const char *ovpn_version_patch;
};

struct ovpn_plugin_open_out {
    int type_mask; /* the events the plugin wants */
    void *handle;
    struct ovpn_plugin_string_list **return_list;
};

struct ovpn_plugin_func_in {
    int type;
    const char **argv;
    const char **envp;
    void *handle;
    void *per_client_context;
    int current_cert_depth; /* -1 when no certificate is passed */
    void *current_cert;     /* X509 * or mbedtls_x509_crt * per ssl_api; NULL from ovpnd */
};

struct ovpn_plugin_func_out {
    struct ovpn_plugin_string_list **return_list;
};

/* Entry point types, looked up by the symbol names above. */
typedef int (*ovpn_plugin_open_v3_fn)(int version, const struct ovpn_plugin_open_in *in,
                                      struct ovpn_plugin_open_out *out);
typedef void *(*ovpn_plugin_open_v2_fn)(unsigned int *type_mask, const char **argv,
                                        const char **envp,
                                        struct ovpn_plugin_string_list **return_list);
typedef void *(*ovpn_plugin_open_v1_fn)(unsigned int *type_mask, const char **argv,
                                        const char **envp);
typedef int (*ovpn_plugin_func_v3_fn)(int version, const struct ovpn_plugin_func_in *in,
                                      struct ovpn_plugin_func_out *out);
typedef int (*ovpn_plugin_func_v2_fn)(void *handle, int type, const char **argv, const char **envp,
                                      void *per_client_context,
                                      struct ovpn_plugin_string_list **return_list);
typedef int (*ovpn_plugin_func_v1_fn)(void *handle, int type, const char **argv, const char **envp);
typedef void (*ovpn_plugin_close_v1_fn)(void *handle);
typedef void (*ovpn_plugin_abort_v1_fn)(void *handle);
typedef void *(*ovpn_plugin_client_constructor_v1_fn)(void *handle);
typedef void (*ovpn_plugin_client_destructor_v1_fn)(void *handle, void *per_client_context);

#endif /* SERVER_HOOKS_OPENVPN_PLUGIN_H */
