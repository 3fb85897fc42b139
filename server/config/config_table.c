/* server/config/config_table.c: every directive openvpn 2.6 knows on Linux (src/openvpn/options.c,
 * add_option), plus ovpnd's own, with what ovpnd does with it. Argument counts are openvpn's.
 *
 * Ignoring a directive is only allowed when it can neither weaken security nor change anything
 * a client would notice; everything else that is not implemented stops start-up.
 */
#include "server/config/config_internal.h"

#include <string.h>

#define G CONFIG_F_GLOBAL
#define I CONFIG_F_INLINE
#define SET(n, lo, hi, fl, h)                                                                      \
    {                                                                                              \
        n, lo, hi, CONFIG_KIND_SET, G | (fl), h, NULL                                              \
    }
#define IGNORE(n, lo, hi, why)                                                                     \
    {                                                                                              \
        n, lo, hi, CONFIG_KIND_IGNORE, G, NULL, why                                                \
    }
#define TODO(n, fl, note)                                                                          \
    {                                                                                              \
        n, 0, 0, CONFIG_KIND_TODO, G | (fl), NULL, note                                            \
    }
#define CCD(n)                                                                                     \
    {                                                                                              \
        n, 0, 0, CONFIG_KIND_TODO, CONFIG_F_CCD, NULL, NULL                                        \
    }
#define CLIENT(n, fl, note)                                                                        \
    {                                                                                              \
        n, 0, 0, CONFIG_KIND_CLIENT, G | (fl), NULL, note                                          \
    }
/* A client option that openvpn 2.6 also accepts in a server config, where it does nothing:
 * accepted with a warning (and the note, when there is one). */
#define CLIENT_NO_EFFECT(n, note)                                                                  \
    {                                                                                              \
        n, 0, CONFIG_MAX_ARGS - 1, CONFIG_KIND_IGNORE, G | CONFIG_F_CLIENT_OPTION, NULL, note      \
    }
#define REFUSED(n, why)                                                                            \
    {                                                                                              \
        n, 0, 0, CONFIG_KIND_REFUSED, G, NULL, why                                                 \
    }

#define NO_SCRIPTS "ovpnd runs no up/down scripts"
#define P2P_ONLY "only meaningful for a point-to-point link"
#define ACTION "is an openvpn command-line action, not a config directive"
#define PUSHED "it is received from the server in PUSH_REPLY"
#define USE_PUSH(x) "to send it to clients, write push \"" x " ...\""

static const struct config_directive directives[] = {
    CLIENT_NO_EFFECT("allow-pull-fqdn", NULL),
    SET("allow-compression", 1, 1, 0, config_h_allow_compression),
    IGNORE("allow-deprecated-insecure-static-crypto", 0, 0,
           "openvpn 2.7: it only permits static-key mode (secret), which ovpnd refuses"),
    CLIENT("allow-recursive-routing", 0, NULL),
    SET("askpass", 0, 1, 0, config_h_askpass),
    SET("auth", 1, 1, 0, config_h_auth),
    SET("auth-gen-token", 0, 3, 0, config_h_auth_gen_token),
    SET("auth-gen-token-secret", 1, 1, I, config_h_auth_gen_token_secret),
    IGNORE("auth-nocache", 0, 0, "ovpnd keeps no passwords in memory"),
    CLIENT_NO_EFFECT("auth-retry", NULL),
    CLIENT_NO_EFFECT("auth-token", PUSHED),
    CLIENT_NO_EFFECT("auth-token-user", PUSHED),
    CLIENT("auth-user-pass", I, NULL),
    SET("auth-user-pass-optional", 0, 0, 0, config_h_auth_user_pass_optional),
    SET("auth-user-pass-verify", 1, 2, 0, config_h_auth_user_pass_verify),
    IGNORE("bcast-buffers", 1, 1, "only used with client-to-client"),
    IGNORE("bind", 0, 1, NULL), /* a server always binds its port */
    SET("bind-dev", 1, 1, 0, config_h_bind_dev),
    SET("block-ipv6", 0, 0, 0, config_h_block_ipv6),
    SET("ca", 1, 1, I, config_h_ca),
    SET("capath", 1, 1, 0, config_h_capath),
    SET("ccd-exclusive", 0, 0, 0, config_h_ccd_exclusive),
    SET("cd", 1, 1, 0, config_h_cd),
    SET("cert", 1, 1, I, config_h_cert),
    SET("chroot", 1, 1, 0, config_h_chroot),
    SET("cipher", 1, 1, 0, config_h_cipher),
    CLIENT("client", 0, NULL),
    REFUSED("client-cert-not-required",
            "removed in openvpn 2.5; 'verify-client-cert none' replaces it"),
    SET("client-config-dir", 1, 1, 0, config_h_client_config_dir),
    SET("client-connect", 1, 1, 0, config_h_hook_script),
    SET("client-crresponse", 1, 1, 0, config_h_hook_script),
    SET("client-disconnect", 1, 1, 0, config_h_hook_script),
    SET("client-nat", 4, 4, 0, config_h_client_nat),
    SET("client-to-client", 0, 0, 0, config_h_client_to_client),
    SET("comp-lzo", 0, 1, 0, config_h_comp_lzo),
    SET("comp-noadapt", 0, 0, 0, config_h_comp_noadapt),
    SET("compat-mode", 1, 2, 0, config_h_compat_mode),
    REFUSED("compat-names", "removed in openvpn 2.5: update the configuration"),
    SET("compress", 0, 1, 0, config_h_compress),
    SET("config", 1, 1, 0, config_h_config),
    SET("connect-freq", 2, 2, 0, config_h_connect_freq),
    SET("connect-freq-initial", 2, 2, 0, config_h_connect_freq_initial),
    CLIENT_NO_EFFECT("connect-retry", NULL),
    CLIENT_NO_EFFECT("connect-retry-max", NULL),
    CLIENT_NO_EFFECT("connect-timeout", NULL),
    CLIENT("connection", I, NULL),
    SET("crl-verify", 1, 2, I, config_h_crl_verify),
    SET("daemon", 0, 1, 0, config_h_daemon),
    SET("data-ciphers", 1, 1, 0, config_h_data_ciphers),
    SET("data-ciphers-fallback", 1, 1, 0, config_h_data_ciphers_fallback),
    SET("dev", 1, 1, 0, config_h_dev),
    SET("dev-node", 1, 1, 0, config_h_dev_node),
    SET("dev-type", 1, 1, 0, config_h_dev_type),
    SET("dh", 1, 1, I, config_h_dh),
    CLIENT_NO_EFFECT("dhcp-option", "it is not sent to clients: write push \"dhcp-option ...\""),
    CCD("disable"),
    IGNORE("disable-dco", 0, 0, NULL), /* ovpnd has no data channel offload to disable */
    IGNORE("disable-occ", 0, 0, "options-consistency messages are not sent"),
    IGNORE("dns", 1, CONFIG_MAX_ARGS - 1,
           "in a server, 2.6 only hands it to its own scripts as dns_* variables, which ovpnd "
           "does not set; to give clients DNS servers, push it: push \"dns server 0 address "
           "ADDR\""),
    IGNORE("dns-updown", 1, 1,
           "openvpn 2.7: a server's own dns lines are not applied to its host (see dns), so no "
           "DNS script runs"),
    SET("down", 1, 1, 0, config_h_hook_script),
    SET("down-pre", 0, 0, 0, config_h_down_pre),
    SET("duplicate-cn", 0, 0, 0, config_h_duplicate_cn),
    IGNORE("echo", 0, 15, "echo messages only go to a management client"),
    IGNORE("ecdh-curve", 1, 1,
           "as openvpn 2.6 does with OpenSSL 3 and with Mbed TLS; use tls-groups to choose the "
           "ECDH groups"),
    IGNORE("engine", 0, 1,
           "OpenSSL engines are not loaded: ovpnd's data channel uses OpenSSL's default "
           "provider and its TLS runs on Mbed TLS"),
    IGNORE("errors-to-stderr", 0, 0, "errors go to ovpnd's log"),
    SET("explicit-exit-notify", 0, 1, 0, config_h_explicit_exit_notify),
    SET("extra-certs", 1, 1, I, config_h_extra_certs),
    IGNORE("fast-io", 0, 0, "ovpnd's event loop has no such mode"),
    IGNORE("float", 0, 0, "a server always lets clients change address (peer-id)"),
    SET("force-tls-key-material-export", 0, 0, 0, config_h_force_tls_key_material_export),
    SET("fragment", 1, 2, 0, config_h_fragment),
    REFUSED("genkey", ACTION),
    IGNORE("gremlin", 1, 1,
           "a debugging aid that damages traffic on purpose: ovpnd does not simulate network "
           "faults (nftables or tc can)"),
    SET("group", 1, 1, 0, config_h_group),
    SET("hand-window", 1, 1, 0, config_h_hand_window),
    IGNORE("hash-size", 2, 2, "ovpnd sizes its tables itself"),
    REFUSED("help", ACTION),
    CLIENT("http-proxy", 0, NULL),
    CLIENT("http-proxy-option", 0, NULL),
    CLIENT_NO_EFFECT("http-proxy-override", NULL),
    CLIENT_NO_EFFECT("http-proxy-retry", NULL),
    CLIENT_NO_EFFECT("http-proxy-timeout", NULL),
    CLIENT("http-proxy-user-pass", I, NULL),
    SET("ifconfig", 2, 2, 0, config_h_ifconfig),
    SET("ifconfig-ipv6", 2, 2, 0, config_h_ifconfig_ipv6),
    SET("ifconfig-ipv6-pool", 1, 1, 0, config_h_ifconfig_ipv6_pool),
    CCD("ifconfig-ipv6-push"),
    SET("ifconfig-noexec", 0, 0, 0, config_h_ifconfig_noexec),
    IGNORE("ifconfig-nowarn", 0, 0, "no options-consistency checks are made"),
    SET("ifconfig-pool", 2, 3, 0, config_h_ifconfig_pool),
    SET("ifconfig-pool-persist", 1, 2, 0, config_h_ifconfig_pool_persist),
    CCD("ifconfig-push"),
    SET("ifconfig-push-constraint", 2, 2, 0, config_h_ifconfig_push_constraint),
    SET("ignore-unknown-option", 1, CONFIG_MAX_ARGS - 1, 0, config_h_ignore_unknown_option),
    SET("inactive", 1, 2, 0, config_h_inactive),
    CLIENT("ipchange", 0, NULL),
    TODO("iproute", 0, NULL),
    CCD("iroute"),
    CCD("iroute-ipv6"),
    SET("keepalive", 2, 2, 0, config_h_keepalive),
    SET("key", 1, 1, I, config_h_key),
    CLIENT_NO_EFFECT("key-derivation", PUSHED),
    SET("key-direction", 1, 1, 0, config_h_key_direction),
    SET("keying-material-exporter", 2, 2, 0, config_h_keying_material_exporter),
    SET("learn-address", 1, 1, 0, config_h_hook_script),
    SET("link-mtu", 1, 1, 0, config_h_link_mtu),
    SET("lladdr", 1, 1, 0, config_h_lladdr),
    SET("local", 1, 3, 0, config_h_local),
    SET("log", 1, 1, 0, config_h_log),
    SET("log-append", 1, 1, 0, config_h_log_append),
    SET("lport", 1, 1, 0, config_h_port),
    SET("machine-readable-output", 0, 0, 0, config_h_machine_readable_output),
    SET("management", 2, 3, 0, config_h_management),
    SET("management-client", 0, 0, 0, config_h_management_flag),
    SET("management-client-auth", 0, 0, 0, config_h_management_flag),
    SET("management-client-group", 1, 1, 0, config_h_management_client_group),
    SET("management-client-user", 1, 1, 0, config_h_management_client_user),
    SET("management-external-cert", 1, 1, 0, config_h_management_external_cert),
    SET("management-external-key", 0, 4, 0, config_h_management_external_key),
    SET("management-forget-disconnect", 0, 0, 0, config_h_management_flag),
    SET("management-hold", 0, 0, 0, config_h_management_flag),
    SET("management-log-cache", 1, 1, 0, config_h_management_log_cache),
    SET("management-query-passwords", 0, 0, 0, config_h_management_flag),
    CLIENT("management-query-proxy", 0,
           "openvpn 2.6 takes it in a server config and then waits at start-up for an answer on "
           "the management interface that its server mode refuses (\"ERROR: The 'proxy' command is "
           "not supported by the current daemon mode\"): it never starts; remove the line"),
    CLIENT("management-query-remote", 0,
           "openvpn 2.6 takes it in a server config and then waits at start-up for an answer on "
           "the management interface that its server mode refuses (\"ERROR: The 'remote' command "
           "is not supported by the current daemon mode\"): it never starts; remove the line"),
    SET("management-signal", 0, 0, 0, config_h_management_flag),
    SET("management-up-down", 0, 0, 0, config_h_management_flag),
    SET("mark", 1, 1, 0, config_h_mark),
    SET("max-clients", 1, 1, 0, config_h_max_clients),
    SET("max-packet-size", 1, 1, 0, config_h_max_packet_size),
    IGNORE("max-routes", 1, 1, "deprecated in openvpn and without effect"),
    SET("max-routes-per-client", 1, 1, 0, config_h_max_routes_per_client),
    IGNORE("memstats", 1, 1, "ovpnd writes no memory statistics file"),
    SET("metrics", 2, 2, 0, config_h_metrics),
    SET("metrics-per-client", 0, 0, 0, config_h_metrics_per_client),
    REFUSED("mktun", ACTION),
    SET("mlock", 0, 0, 0, config_h_mlock),
    SET("mode", 1, 1, 0, config_h_mode),
    SET("mssfix", 0, 2, 0, config_h_mssfix),
    IGNORE("mtu-disc", 1, 1, "the kernel's path-MTU discovery default is kept"),
    REFUSED("mtu-dynamic", "replaced by fragment in openvpn"),
    IGNORE("mtu-test", 0, 0, P2P_ONLY),
    SET("multihome", 0, 0, 0, config_h_multihome),
    SET("mute", 1, 1, 0, config_h_mute),
    IGNORE("mute-replay-warnings", 0, 0, "replay warnings are rate-limited anyway"),
    SET("ncp-ciphers", 1, 1, 0, config_h_data_ciphers),
    SET("nice", 1, 1, 0, config_h_nice),
    SET("no-replay", 0, 0, 0, config_h_no_replay),
    REFUSED("no-name-remapping", "removed in openvpn 2.5: update the configuration"),
    CLIENT("nobind", 0, NULL),
    SET("ns-cert-type", 1, 1, 0, config_h_ns_cert_type),
    CCD("override-username"),
    IGNORE("opt-verify", 0, 0,
           "deprecated in openvpn 2.6 (removed in 2.7); ovpnd does not compare the client's "
           "options string with its own"),
    IGNORE("parameter", 0, 15, "echo messages only go to a management client"),
    SET("passtos", 0, 0, 0, config_h_passtos),
    SET("peer-fingerprint", 1, 1, I, config_h_peer_fingerprint),
    CLIENT_NO_EFFECT("peer-id", PUSHED),
    SET("persist-key", 0, 0, 0, config_h_persist_key),
    IGNORE("persist-local-ip", 0, 0, P2P_ONLY),
    IGNORE("persist-remote-ip", 0, 0, P2P_ONLY),
    SET("persist-tun", 0, 0, 0, config_h_persist_tun),
    SET("ping", 1, 1, 0, config_h_ping),
    SET("ping-exit", 1, 1, 0, config_h_ping_exit),
    SET("ping-restart", 1, 1, 0, config_h_ping_restart),
    IGNORE("ping-timer-rem", 0, 0, P2P_ONLY),
    SET("pkcs11-cert-private", 0, CONFIG_MAX_ARGS - 1, 0, config_h_pkcs11_list),
    SET("pkcs11-id", 1, 1, 0, config_h_pkcs11_id),
    SET("pkcs11-id-management", 0, 0, 0, config_h_pkcs11_id_management),
    SET("pkcs11-pin-cache", 1, 1, 0, config_h_pkcs11_pin_cache),
    SET("pkcs11-private-mode", 1, CONFIG_MAX_ARGS - 1, 0, config_h_pkcs11_list),
    SET("pkcs11-protected-authentication", 0, CONFIG_MAX_ARGS - 1, 0, config_h_pkcs11_list),
    SET("pkcs11-providers", 1, CONFIG_MAX_ARGS - 1, 0, config_h_pkcs11_providers),
    SET("pkcs12", 1, 1, I, config_h_pkcs12),
    SET("plugin", 1, CONFIG_MAX_ARGS - 1, 0, config_h_plugin),
    SET("port", 1, 1, 0, config_h_port),
    SET("port-share", 2, 3, 0, config_h_port_share),
    CLIENT_NO_EFFECT("preresolve", NULL),
    IGNORE("prng", 0, 2, "the TLS library's random generator is used"),
    SET("proto", 1, 1, 0, config_h_proto),
    SET("proto-force", 1, 1, 0, config_h_proto_force),
    CLIENT_NO_EFFECT("protocol-flags", PUSHED),
    IGNORE("providers", 1, CONFIG_MAX_ARGS - 1,
           "ovpnd's TLS runs on Mbed TLS, which has no OpenSSL providers, and its data channel "
           "uses the AEAD ciphers of OpenSSL's default provider, which is always loaded"),
    CLIENT("pull", 0, NULL),
    CLIENT_NO_EFFECT("pull-filter", NULL),
    {"push", 1, 1, CONFIG_KIND_SET, G | CONFIG_F_CCD, config_h_push, NULL},
    CLIENT("push-continuation", 0, PUSHED),
    CLIENT_NO_EFFECT("push-peer-info", NULL),
    CCD("push-remove"),
    CCD("push-reset"),
    IGNORE("rcvbuf", 1, 1, "socket buffers keep ovpnd's sizes"),
    CLIENT("redirect-gateway", 0, USE_PUSH("redirect-gateway")),
    CLIENT("redirect-private", 0, USE_PUSH("redirect-private")),
    SET("remap-usr1", 1, 1, 0, config_h_remap_usr1),
    CLIENT("remote", 0, NULL),
    SET("remote-cert-eku", 1, 1, 0, config_h_remote_cert_eku),
    SET("remote-cert-ku", 0, CONFIG_MAX_REMOTE_CERT_KU, 0, config_h_remote_cert_ku),
    SET("remote-cert-tls", 1, 1, 0, config_h_remote_cert_tls),
    CLIENT_NO_EFFECT("remote-random", NULL),
    CLIENT_NO_EFFECT("remote-random-hostname", NULL),
    SET("reneg-bytes", 1, 1, 0, config_h_reneg_traffic),
    SET("reneg-pkts", 1, 1, 0, config_h_reneg_traffic),
    SET("reneg-sec", 1, 2, 0, config_h_reneg_sec),
    IGNORE("replay-persist", 1, 1,
           "openvpn 2.6 loads and saves the file only in point-to-point (static key) mode; a "
           "server keeps no replay state across restarts"),
    SET("replay-window", 1, 2, 0, config_h_replay_window),
    CLIENT_NO_EFFECT("resolv-retry", NULL),
    REFUSED("rmtun", ACTION),
    SET("route", 1, 4, 0, config_h_route),
    TODO("route-delay", 0, NULL),
    SET("route-gateway", 1, 1, 0, config_h_route_gateway),
    SET("route-ipv6", 1, 3, 0, config_h_route_ipv6),
    SET("route-ipv6-gateway", 1, 1, 0, config_h_route_gateway),
    SET("route-metric", 1, 1, 0, config_h_route_metric),
    SET("route-noexec", 0, 0, 0, config_h_route_noexec),
    SET("route-table", 1, 1, 0, config_h_route_table),
    CLIENT_NO_EFFECT("route-nopull", NULL),
    SET("route-pre-down", 1, 1, 0, config_h_hook_script),
    SET("route-up", 1, 1, 0, config_h_hook_script),
    CLIENT_NO_EFFECT("rport", NULL),
    SET("script-security", 1, 2, 0, config_h_script_security),
    REFUSED("secret", "static-key mode is not supported: ovpnd needs TLS (ca, cert, key)"),
    SET("server", 2, 3, 0, config_h_server),
    SET("server-bridge", 0, 4, 0, config_h_server_bridge),
    SET("server-ipv6", 1, 1, 0, config_h_server_ipv6),
    CLIENT_NO_EFFECT("server-poll-timeout", NULL),
    SET("session-timeout", 1, 1, 0, config_h_session_timeout),
    TODO("setcon", 0, NULL),
    SET("setenv", 1, 2, 0, config_h_setenv),
    SET("setenv-safe", 1, 2, 0, config_h_setenv),
    TODO("shaper", 0, NULL),
    REFUSED("show-ciphers", ACTION),
    REFUSED("show-curves", ACTION),
    REFUSED("show-digests", ACTION),
    REFUSED("show-engines", ACTION),
    REFUSED("show-gateway", ACTION),
    REFUSED("show-groups", ACTION),
    REFUSED("show-net", ACTION),
    REFUSED("show-net-up", ACTION),
    REFUSED("show-pkcs11-ids", ACTION),
    REFUSED("show-tls", ACTION),
    REFUSED("show-valid-subnets", ACTION),
    IGNORE("single-session", 0, 0, P2P_ONLY),
    IGNORE("sndbuf", 1, 1, "socket buffers keep ovpnd's sizes"),
    SET("socket-flags", 1, CONFIG_MAX_ARGS - 1, 0, config_h_socket_flags),
    CLIENT("socks-proxy", 0, NULL),
    CLIENT_NO_EFFECT("socks-proxy-retry", NULL),
    SET("stale-routes-check", 1, 2, 0, config_h_stale_routes_check),
    CLIENT_NO_EFFECT("static-challenge", NULL),
    SET("status", 1, 2, 0, config_h_status),
    SET("status-version", 1, 1, 0, config_h_status_version),
    SET("suppress-timestamps", 0, 0, 0, config_h_suppress_timestamps),
    SET("syslog", 0, 1, 0, config_h_syslog),
    SET("tcp-queue-limit", 1, 1, 0, config_h_tcp_queue_limit),
    SET("tcp-nodelay", 0, 0, 0, config_h_tcp_nodelay),
    REFUSED("test-crypto", ACTION),
    SET("tls-auth", 1, 2, I, config_h_tls_auth),
    SET("tls-cert-profile", 1, 1, 0, config_h_tls_cert_profile),
    SET("tls-cipher", 1, 1, 0, config_h_tls_cipher),
    IGNORE("tls-ciphersuites", 1, 1,
           "it applies to TLS 1.3, and ovpnd's Mbed TLS 2.28 speaks TLS 1.2 (tls-cipher applies)"),
    CLIENT("tls-client", 0, NULL),
    SET("tls-crypt", 1, 2, I, config_h_tls_crypt),
    SET("tls-crypt-v2", 1, 2, I, config_h_tls_crypt_v2),
    SET("tls-crypt-v2-max-age", 1, 1, 0, config_h_tls_crypt_v2_max_age),
    SET("tls-crypt-v2-verify", 1, 1, 0, config_h_hook_script),
    IGNORE("tls-exit", 0, 0,
           "in a server it ends only the failing client's session (2.6: a signal to that "
           "client's instance), which ovpnd always does"),
    SET("tls-export-cert", 1, 1, 0, config_h_tls_export_cert),
    SET("tls-groups", 1, 1, 0, config_h_tls_groups),
    SET("tls-server", 0, 0, 0, config_h_tls_server),
    SET("tls-timeout", 1, 1, 0, config_h_tls_timeout),
    SET("tls-verify", 1, 1, 0, config_h_hook_script),
    SET("tls-version-max", 1, 1, 0, config_h_tls_version_max),
    SET("tls-version-min", 1, 2, 0, config_h_tls_version_min),
    SET("tmp-dir", 1, 1, 0, config_h_tmp_dir),
    SET("topology", 1, 1, 0, config_h_topology),
    SET("tran-window", 1, 1, 0, config_h_tran_window),
    IGNORE("tun-ipv6", 0, 0, "not needed by modern systems (as in openvpn 2.6)"),
    SET("tun-mtu", 1, 2, 0, config_h_tun_mtu),
    IGNORE("tun-mtu-extra", 1, 1,
           "only used with dev tap, where ovpnd keeps 32, openvpn 2.6's default"),
    IGNORE("tun-mtu-max", 1, 1, "only used by clients"),
    SET("txqueuelen", 1, 1, 0, config_h_txqueuelen),
    SET("udp-mtu", 1, 1, 0, config_h_link_mtu),
    SET("up", 1, 1, 0, config_h_hook_script),
    REFUSED("up-delay", "cannot be used in a server (openvpn 2.6: \"--up-delay cannot be used "
                        "with --mode server\")"),
    IGNORE("up-restart", 0, 0, "ovpnd never restarts in place, so up runs once"),
    TODO("use-prediction-resistance", 0, NULL),
    SET("user", 1, 1, 0, config_h_user),
    SET("username-as-common-name", 0, 0, 0, config_h_username_as_common_name),
    SET("verb", 1, 1, 0, config_h_verb),
    SET("verify-client-cert", 0, 1, 0, config_h_verify_client_cert),
    SET("verify-hash", 1, 2, I, config_h_verify_hash),
    SET("verify-x509-name", 1, 2, 0, config_h_verify_x509_name),
    REFUSED("version", ACTION),
    SET("vlan-accept", 1, 1, 0, config_h_vlan_accept),
    SET("vlan-pvid", 1, 1, 0, config_h_vlan_pvid),
    SET("vlan-tagging", 0, 0, 0, config_h_vlan_tagging),
    SET("workers", 1, 1, 0, config_h_workers),
    SET("writepid", 1, 1, 0, config_h_writepid),
    SET("x509-track", 1, 1, 0, config_h_x509_track),
    SET("x509-username-field", 1, 15, 0, config_h_x509_username_field),
};

const struct config_directive *config_directive_find(const char *name)
{
    for (size_t i = 0; i < sizeof(directives) / sizeof(directives[0]); i++) {
        if (strcmp(directives[i].name, name) == 0) {
            return &directives[i];
        }
    }
    return NULL;
}

size_t config_directive_count(void)
{
    return sizeof(directives) / sizeof(directives[0]);
}
