/* tests/bench/loadgen_report.c: totals, summary and JSON of a load-generator run. */
#include "tests/bench/loadgen_report.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/bench/loadgen_client.h"

static void count_reason(struct loadgen_report *r, const char *reason)
{
    for (size_t i = 0; i < r->n_reasons; i++) {
        if (r->reasons[i].reason == reason || strcmp(r->reasons[i].reason, reason) == 0) {
            r->reasons[i].n++;
            return;
        }
    }
    if (r->n_reasons < LOADGEN_REPORT_MAX_REASONS) {
        r->reasons[r->n_reasons].reason = reason;
        r->reasons[r->n_reasons].n = 1;
        r->n_reasons++;
    }
}

static void add_client(struct loadgen_report *r, const struct loadgen_client *c,
                       uint64_t *connect_sum_ms)
{
    const struct loadgen_client_stats *st = &c->st;

    if (c->was_connected) {
        r->connected++;
        *connect_sum_ms += c->connected_ms - c->start_ms;
    }
    if (c->state == LOADGEN_CLIENT_FAILED) {
        r->failed++;
        count_reason(r, c->fail_reason ? c->fail_reason : "unknown");
    } else if (c->state == LOADGEN_CLIENT_DONE) {
        r->completed++;
    } else {
        r->failed++; /* cannot happen after a normal end; counted so it is never hidden */
        count_reason(r, "did not finish");
    }
    if (st->echoed > 0) {
        r->clients_with_echo++;
    }
    if (r->clients == 1 || st->echoed < r->min_echoed) {
        r->min_echoed = st->echoed;
    }
    r->sent += st->sent;
    r->echoed += st->echoed;
    r->echoed_steady += st->echoed_steady;
    r->push_replies += st->push_replies;
    r->push_requests += st->push_requests;
    r->pings_rx += st->pings_rx;
    r->pings_tx += st->pings_tx;
    r->retransmits += st->retransmits;
    r->restarts += st->restarts;
    r->resets_sent += st->resets_sent;
    r->drops += st->drops;
    r->early_data += st->early_data;
    r->forged += st->forged;
    r->decompressed += st->decompressed;
    r->other_rx += st->other_rx;
    r->echo_answers += st->echo_answers;
    r->send_errors += st->send_errors;
    r->soft_resets_ignored += st->soft_resets_ignored;
}

void loadgen_report_collect(struct loadgen_report *r, const struct loadgen_worker *workers,
                            int n_workers, const struct loadgen_run *run, double steady_secs,
                            long rss_kb)
{
    uint64_t connect_sum_ms = 0, rtt_sum_us = 0, last_connect;

    memset(r, 0, sizeof(*r));
    for (int i = 0; i < n_workers; i++) {
        for (size_t k = 0; k < workers[i].n_clients; k++) {
            r->clients++;
            add_client(r, &workers[i].clients[k], &connect_sum_ms);
            rtt_sum_us += workers[i].clients[k].st.rtt_sum_us;
        }
    }
    last_connect = atomic_load(&run->last_connect_ms);
    r->all_connected = r->clients > 0 && r->connected == r->clients;
    if (r->connected > 0 && last_connect > run->t0_ms) {
        double secs = (double)(last_connect - run->t0_ms) / 1000.0;

        r->connect_all_secs = secs;
        r->handshakes_per_sec = (double)r->connected / secs;
        r->connect_avg_ms = (double)connect_sum_ms / (double)r->connected;
    }
    r->steady_secs = steady_secs;
    r->data_pps = steady_secs > 0 ? (double)r->echoed_steady / steady_secs : 0;
    r->rtt_avg_ms = r->echoed ? (double)rtt_sum_us / (double)r->echoed / 1000.0 : 0;
    if (rss_kb >= 0) {
        r->has_rss = true;
        r->server_rss_kb = rss_kb;
        r->rss_per_client_kb = r->connected ? (double)rss_kb / (double)r->connected : 0;
    }
}

void loadgen_report_print(const struct loadgen_report *r, FILE *out)
{
    fprintf(out, "clients %zu: connected %zu, failed %zu, completed %zu\n", r->clients,
            r->connected, r->failed, r->completed);
    if (r->all_connected) {
        fprintf(out, "all connected in %.3f s: %.1f handshakes/s, %.1f ms per connect on average\n",
                r->connect_all_secs, r->handshakes_per_sec, r->connect_avg_ms);
    } else {
        fprintf(out, "not all connected: %.1f handshakes/s\n", r->handshakes_per_sec);
    }
    fprintf(out,
            "data: %llu echo requests sent, %llu replies (%zu clients got replies, min %llu per "
            "client), %.1f replies/s in %.1f s steady, rtt %.3f ms\n",
            (unsigned long long)r->sent, (unsigned long long)r->echoed, r->clients_with_echo,
            (unsigned long long)r->min_echoed, r->data_pps, r->steady_secs, r->rtt_avg_ms);
    fprintf(out,
            "control: %llu PUSH_REPLY received, %llu PUSH_REQUEST sent, %llu retransmits; "
            "%llu packets dropped (+%llu data before keys), %llu other tunnel packets, "
            "%llu echo requests answered, %llu send errors\n",
            (unsigned long long)r->push_replies, (unsigned long long)r->push_requests,
            (unsigned long long)r->retransmits, (unsigned long long)r->drops,
            (unsigned long long)r->early_data, (unsigned long long)r->other_rx,
            (unsigned long long)r->echo_answers, (unsigned long long)r->send_errors);
    fprintf(out, "sessions: %llu hard resets sent, %llu sessions started over after hand-window\n",
            (unsigned long long)r->resets_sent, (unsigned long long)r->restarts);
    if (r->has_rss) {
        fprintf(out, "server RSS %ld kB, %.1f kB per connected client\n", r->server_rss_kb,
                r->rss_per_client_kb);
    }
    for (size_t i = 0; i < r->n_reasons; i++) {
        fprintf(out, "failed: %zu x %s\n", r->reasons[i].n, r->reasons[i].reason);
    }
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;

        if (ch == '"' || ch == '\\') {
            fprintf(f, "\\%c", ch);
        } else if (ch < 0x20 || ch == 0x7f) {
            fprintf(f, "\\u%04x", ch);
        } else {
            fputc(ch, f);
        }
    }
    fputc('"', f);
}

/* The compression option the server pushed, as the client reads it. */
static const char *framing_name(enum loadgen_comp comp)
{
    switch (comp) {
    case LOADGEN_COMP_STUB_V2:
        return "compress stub-v2";
    case LOADGEN_COMP_LZO_STUB:
        return "comp-lzo no";
    case LOADGEN_COMP_STUB:
        return "compress stub";
    case LOADGEN_COMP_NONE:
        break;
    }
    return "none";
}

static void json_client(FILE *f, const struct loadgen_client *c)
{
    char ip[INET_ADDRSTRLEN] = "";
    struct in_addr a = {.s_addr = htonl(c->tun_addr)};

    if (c->tun_addr) {
        inet_ntop(AF_INET, &a, ip, sizeof(ip));
    }
    fprintf(f, "    {\"index\": %zu, \"state\": ", c->index);
    json_string(f, loadgen_client_state_name(c->state));
    fprintf(f, ", \"tun_ip\": ");
    json_string(f, ip);
    fprintf(f,
            ", \"peer_id\": %ld, \"connect_ms\": %lld, \"sent\": %llu, \"echoed\": %llu, "
            "\"push_replies\": %llu, \"push_requests\": %llu, \"retransmits\": %llu, "
            "\"connected_at_ms\": %lld, \"exit_at_ms\": %lld, \"exit_acked_at_ms\": %lld",
            c->push.has_peer_id ? (long)c->push.peer_id : -1L,
            c->was_connected ? (long long)(c->connected_ms - c->start_ms) : -1LL,
            (unsigned long long)c->st.sent, (unsigned long long)c->st.echoed,
            (unsigned long long)c->st.push_replies, (unsigned long long)c->st.push_requests,
            (unsigned long long)c->st.retransmits,
            c->was_connected ? (long long)c->connected_ms : -1LL,
            c->exit_ms ? (long long)c->exit_ms : -1LL,
            c->exit_acked_ms ? (long long)c->exit_acked_ms : -1LL);
    fprintf(f, ", \"echo_answers\": %llu, \"framing\": ", (unsigned long long)c->st.echo_answers);
    json_string(f, framing_name(c->push.comp));
    if (c->fail_reason) {
        fprintf(f, ", \"fail_reason\": ");
        json_string(f, c->fail_reason);
        fprintf(f, ", \"fail_detail\": ");
        json_string(f, c->fail_detail);
    }
    fprintf(f, "}");
}

int loadgen_report_write_json(const struct loadgen_report *r, const struct loadgen_worker *workers,
                              int n_workers, const char *path)
{
    FILE *f = fopen(path, "w");
    size_t n_written = 0;

    if (!f) {
        return -errno;
    }
    fprintf(f, "{\n  \"clients\": %zu,\n  \"connected\": %zu,\n  \"failed\": %zu,\n", r->clients,
            r->connected, r->failed);
    fprintf(f, "  \"completed\": %zu,\n  \"handshakes_per_sec\": %.3f,\n", r->completed,
            r->handshakes_per_sec);
    if (r->all_connected) {
        fprintf(f, "  \"connect_all_secs\": %.3f,\n", r->connect_all_secs);
    } else {
        fprintf(f, "  \"connect_all_secs\": null,\n");
    }
    fprintf(f, "  \"connect_avg_ms\": %.3f,\n  \"steady_secs\": %.3f,\n  \"data_pps\": %.3f,\n",
            r->connect_avg_ms, r->steady_secs, r->data_pps);
    fprintf(f,
            "  \"sent\": %llu,\n  \"echoed\": %llu,\n  \"echoed_steady\": %llu,\n"
            "  \"min_echoed_per_client\": %llu,\n  \"clients_with_echo\": %zu,\n"
            "  \"rtt_avg_ms\": %.3f,\n",
            (unsigned long long)r->sent, (unsigned long long)r->echoed,
            (unsigned long long)r->echoed_steady, (unsigned long long)r->min_echoed,
            r->clients_with_echo, r->rtt_avg_ms);
    fprintf(f,
            "  \"push_replies\": %llu,\n  \"push_requests\": %llu,\n  \"pings_rx\": %llu,\n"
            "  \"pings_tx\": %llu,\n  \"retransmits\": %llu,\n  \"drops\": %llu,\n"
            "  \"early_data\": %llu,\n  \"other_rx\": %llu,\n  \"echo_answers\": %llu,\n"
            "  \"send_errors\": %llu,\n  \"soft_resets_ignored\": %llu,\n"
            "  \"forged\": %llu,\n  \"decompressed\": %llu,\n"
            "  \"resets_sent\": %llu,\n  \"restarts\": %llu,\n",
            (unsigned long long)r->push_replies, (unsigned long long)r->push_requests,
            (unsigned long long)r->pings_rx, (unsigned long long)r->pings_tx,
            (unsigned long long)r->retransmits, (unsigned long long)r->drops,
            (unsigned long long)r->early_data, (unsigned long long)r->other_rx,
            (unsigned long long)r->echo_answers, (unsigned long long)r->send_errors,
            (unsigned long long)r->soft_resets_ignored, (unsigned long long)r->forged,
            (unsigned long long)r->decompressed, (unsigned long long)r->resets_sent,
            (unsigned long long)r->restarts);
    if (r->has_rss) {
        fprintf(f, "  \"server_rss_kb\": %ld,\n  \"rss_per_client_kb\": %.3f,\n", r->server_rss_kb,
                r->rss_per_client_kb);
    }
    fprintf(f, "  \"failures\": {");
    for (size_t i = 0; i < r->n_reasons; i++) {
        fprintf(f, "%s", i ? ", " : "");
        json_string(f, r->reasons[i].reason);
        fprintf(f, ": %zu", r->reasons[i].n);
    }
    fprintf(f, "},\n  \"per_client\": [\n");
    for (int i = 0; i < n_workers; i++) {
        for (size_t k = 0; k < workers[i].n_clients; k++) {
            fprintf(f, "%s", n_written++ ? ",\n" : "");
            json_client(f, &workers[i].clients[k]);
        }
    }
    fprintf(f, "\n  ]\n}\n");
    if (fclose(f) != 0) {
        return -errno;
    }
    return 0;
}

long loadgen_rss_kb(long pid)
{
    char path[64], line[256];
    long kb = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    f = fopen(path, "r");
    if (!f) {
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kb = strtol(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}
