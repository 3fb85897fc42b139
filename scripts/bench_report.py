#!/usr/bin/env python3
"""Helper of scripts/bench.sh: reads iperf3 --json files and the raw records bench.sh collected,
prints the markdown report, writes the JSON report and the gnuplot input.

  bench_report.py iperf FILE
      one line "RECEIVED_MBPS LOSS_PCT RECEIVED_BYTES" for an iperf3 --json result (loss is 0 for
      TCP); exit status 1 when the file holds no finished test.

  bench_report.py sample-threads PID OUT
      every half second until PID ends (or SIGTERM): one JSON line in OUT with the time
      (CLOCK_MONOTONIC, ms: the clock of ovpnd-loadgen's per-client times) and the CPU clock ticks
      (utime + stime) of each thread of PID, summed by thread name.

  bench_report.py report --records TSV [--json OUT] [--plot PREFIX]
      the markdown report on stdout; OUT: every raw figure as JSON; PREFIX.dat and PREFIX.gp: the
      data and gnuplot script of the throughput chart (the script writes PREFIX.png).

  bench_report.py repeat [--json OUT] RUN.json...
      the runs of bench.sh --repeat (each run's --json): one line per run and cipher with its
      ovpnd / openvpn ratios, their medians over the runs and, with --latency-under-load, how
      many runs met each target; OUT: the runs and the medians as JSON.

  With bench.sh --latency-under-load, run records load_c2s_ping / load_s2c_ping (ping output)
  and load_c2s_queues / load_s2c_queues (bench.sh queue_sample blocks) add a latency table.

Records (one per line, tab-separated): SECTION SERVER CIPHER KEY VALUE, where SECTION is meta,
direct, run, loadgen or churn, and SERVER/CIPHER are "-" where they do not apply. Values that
name an iperf3 or load-generator result are file paths; everything else is a number or a word.

Standard library only.
"""

import argparse
import json
import math
import os
import signal
import sys
import time

# ovpnd-mbedtls / ovpnd-openssl: ovpnd on its other data-channel backend (bench.sh --other-backend)
SERVERS = ("ovpnd", "ovpnd-mbedtls", "ovpnd-openssl", "openvpn")
UDP_MAX_LOSS_PCT = 1.0
META_STRINGS = ("date", "kernel", "ciphers", "openvpn_version", "iperf3_version", "ovpnd_version",
                "git_commit", "workers", "ovpnd_data_crypto", "other_server", "other_data_crypto",
                "ovpnd_env", "proto")
RTT_KEYS = ("rtt_ms", "rtt_min_ms", "rtt_median_ms", "rtt_max_ms", "ping_loss_pct")


def iperf_summary(path):
    """(received Mbit/s, loss %, received bytes, sender retransmits, seconds) of an iperf3 --json
    file, or None when it holds no finished test."""
    try:
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(r, dict) or r.get("error"):
        return None
    end = r.get("end") or {}
    recv = end.get("sum_received")
    sent = end.get("sum_sent") or {}
    if not isinstance(recv, dict) or "bits_per_second" not in recv:
        return None
    mbps = recv["bits_per_second"] / 1e6
    loss = float(recv.get("lost_percent", 0.0) or 0.0)
    return {
        "mbps": mbps,
        "loss_pct": loss,
        "bytes": int(recv.get("bytes", 0)),
        "retransmits": sent.get("retransmits"),
        "secs": recv.get("seconds"),
    }


def cmd_iperf(args):
    s = iperf_summary(args.file)
    if s is None:
        return 1
    print("%.3f %.4f %d" % (s["mbps"], s["loss_pct"], s["bytes"]))
    return 0


def num(v):
    """A record value as int or float when it is one, else the string."""
    try:
        return int(v)
    except ValueError:
        pass
    try:
        f = float(v)
        return f if math.isfinite(f) else v
    except ValueError:
        return v


def read_records(path):
    recs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            parts = line.split("\t", 4)
            if len(parts) != 5:
                raise SystemExit("bench_report: bad record line: %r" % line)
            recs.append(parts)
    return recs


def tcp_result(path, srv_ticks, cli_ticks, hz):
    s = iperf_summary(path)
    if s is None:
        return None
    out = {
        "mbps": round(s["mbps"], 3),
        "bytes": s["bytes"],
        "secs": s["secs"],
        "retransmits": s["retransmits"],
    }
    secs = s["secs"] if isinstance(s["secs"], (int, float)) and s["secs"] > 0 else None
    for who, ticks in (("server", srv_ticks), ("client", cli_ticks)):
        if ticks is None:
            continue
        out[who + "_cpu_s"] = ticks / hz
        if secs:
            # Share of one CPU over the run: 100 is one core busy all the time.
            out[who + "_cpu_pct"] = round(100.0 * ticks / hz / secs, 1)
    return out


def per_gb(results, key):
    """CPU seconds of `key` per 10^9 bytes carried over all the given TCP results."""
    cpu = sum(r[key] for r in results if r and key in r)
    nbytes = sum(r["bytes"] for r in results if r and key in r)
    if nbytes <= 0:
        return None
    return cpu / (nbytes / 1e9)


def quantile(xs, q):
    """The q-quantile (0..1) of the sorted list xs, interpolated between neighbours."""
    if not xs:
        return None
    pos = q * (len(xs) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def load_pings(path):
    """bench.sh --latency-under-load: the ping output of one TCP run -> median, p95, loss."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    times = []
    sent = None
    for line in text.splitlines():
        if " time=" in line and line.endswith(" ms"):
            try:
                times.append(float(line.rsplit(" time=", 1)[1].split()[0]))
            except ValueError:
                pass
        elif "packets transmitted" in line:
            try:
                sent = int(line.split()[0])
            except ValueError:
                pass
    times.sort()
    out = {"count": len(times)}
    if times:
        out["median_ms"] = quantile(times, 0.5)
        out["p95_ms"] = quantile(times, 0.95)
        out["max_ms"] = times[-1]
    if sent:
        out["loss_pct"] = round(100.0 * (sent - len(times)) / sent, 2)
    return out


def ss_field(info, name):
    """The value after NAME: in an ss -i info line (the first number of a/b), or None."""
    for tok in info.split():
        if tok.startswith(name + ":"):
            v = tok.split(":", 1)[1].split("/")[0].split(",")[0]
            try:
                return float(v)
            except ValueError:
                return None
    return None


def load_queues(path):
    """bench.sh --latency-under-load: the queue samples of one TCP run. Per sample: the bytes in
    each namespace's UDP receive queues (the tunnel's sockets) and their drops, the drops of its
    TUN devices (queue full), and the TCP socket that has sent the most (the iperf3 sender): its
    srtt and unacked bytes. Medians over the samples."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    samples = []
    cur = {}
    where = None
    last_tcp = None
    for line in lines:
        if line.startswith("@ "):
            if line == "@ end":
                samples.append(cur)
                cur = {}
                where = None
                continue
            where = line[2:]
            last_tcp = None
            continue
        if where is None or not line.strip():
            continue
        indented = line[0] in " \t"
        side, kind = where.split()
        if kind == "udp" and indented and "skmem:" in line:
            # skmem's d: datagrams the socket dropped (receive buffer full), cumulative
            for f in line.split("skmem:(", 1)[1].rstrip(") \t").split(","):
                if f.startswith("d") and f[1:].isdigit():
                    cur[side + "_udp_drops"] = cur.get(side + "_udp_drops", 0) + int(f[1:])
        elif kind == "udp" and not indented:
            parts = line.split()
            try:
                cur[side + "_udp_recvq"] = cur.get(side + "_udp_recvq", 0) + int(parts[1])
            except (IndexError, ValueError):
                pass
        elif kind == "tun" and line.strip().isdigit():
            cur[side + "_tun_drops"] = cur.get(side + "_tun_drops", 0) + int(line.strip())
        elif kind == "tcp":
            if not indented:
                last_tcp = line
                continue
            if last_tcp is None:
                continue
            sent = ss_field(line, "bytes_sent")
            if sent is None or sent <= cur.get("_sent", -1):
                continue
            cur["_sent"] = sent
            unacked, mss = ss_field(line, "unacked") or 0, ss_field(line, "mss") or 0
            cur["sender_unacked"] = unacked * mss
            cur["sender_srtt_ms"] = ss_field(line, "rtt")
            cur["sender_cwnd"] = ss_field(line, "cwnd")
    out = {"samples": len(samples)}
    for side in ("client", "server"):
        for what in ("udp", "tun"):
            key = "%s_%s_drops" % (side, what)
            ds = [x[key] for x in samples if key in x]
            if len(ds) >= 2:
                out[key] = ds[-1] - ds[0]  # between the first and the last sample
    for key, scale, name in (("client_udp_recvq", 1 / 1024.0, "client_udp_recvq_kb"),
                             ("server_udp_recvq", 1 / 1024.0, "server_udp_recvq_kb"),
                             ("sender_unacked", 1 / 1024.0, "sender_unacked_kb"),
                             ("sender_srtt_ms", 1.0, "sender_srtt_ms"),
                             ("sender_cwnd", 1.0, "sender_cwnd")):
        xs = sorted(s[key] * scale for s in samples if s.get(key) is not None)
        if xs:
            out[name] = quantile(xs, 0.5)
            out[name + "_max"] = xs[-1]
    return out


def build(recs):
    meta = {}
    direct = {}
    runs = {}  # (server, cipher) -> {key: [values]}
    loadgen = {}
    churn = {}
    for section, server, cipher, key, value in recs:
        if section == "meta":
            meta[key] = value if key in META_STRINGS else num(value)
        elif section == "direct":
            direct[key] = value
        elif section == "run":
            runs.setdefault((server, cipher), {}).setdefault(key, []).append(value)
        elif section == "loadgen":
            loadgen.setdefault(server, {})[key] = value
        elif section == "churn":
            churn.setdefault(server, {})[key] = value
    hz = float(meta.get("clk_tck", 100))

    out = {"meta": meta, "direct": {}, "runs": [], "comparison": [], "backend_comparison": [],
           "loadgen": {}, "churn": {}}
    d = out["direct"]
    for k in ("tcp_c2s", "tcp_s2c"):
        if k in direct:
            d[k] = tcp_result(direct[k], None, None, hz)
    for k in RTT_KEYS:
        if k in direct:
            d[k] = num(direct[k])
    direct_rtt = d.get("rtt_ms") if isinstance(d.get("rtt_ms"), (int, float)) else None

    for (server, cipher), kv in runs.items():
        one = {k: v[-1] for k, v in kv.items()}
        run = {"server": server, "cipher": cipher}
        for k in ("negotiated_cipher", "server_pid_comm"):
            if k in one:
                run[k] = one[k]
        for k in ("tcp_c2s", "tcp_s2c"):
            if k in one:

                def ticks(name):
                    v = one.get(name)
                    return int(v) if v is not None else None

                run[k] = tcp_result(one[k], ticks(k + "_server_ticks"),
                                    ticks(k + "_client_ticks"), hz)
        tcp = [run.get("tcp_c2s"), run.get("tcp_s2c")]
        run["server_cpu_s_per_gb"] = per_gb(tcp, "server_cpu_s")
        run["client_cpu_s_per_gb"] = per_gb(tcp, "client_cpu_s")
        for k in RTT_KEYS:
            if k in one:
                run[k] = num(one[k])
        if "rtt_ms" in run:
            if isinstance(run["rtt_ms"], (int, float)) and direct_rtt is not None:
                run["added_rtt_ms"] = run["rtt_ms"] - direct_rtt
        for d in ("c2s", "s2c"):
            if "load_%s_ping" % d in one:
                ent = {"ping": load_pings(one["load_%s_ping" % d])}
                if "load_%s_queues" % d in one:
                    ent["queues"] = load_queues(one["load_%s_queues" % d])
                res = run.get("tcp_" + d)
                ent["mbps"] = mbps(res)
                ent["server_cpu_s_per_gb"] = per_gb([res], "server_cpu_s")
                run["load_" + d] = ent
        if "udp_step" in kv:
            steps = []
            for v in kv["udp_step"]:
                target, path = v.split(" ", 1)
                s = iperf_summary(path)
                if s is None:
                    steps.append({"target_mbps": num(target), "failed": True})
                    continue
                steps.append({
                    "target_mbps": num(target),
                    "mbps": round(s["mbps"], 3),
                    "loss_pct": round(s["loss_pct"], 4),
                })
            good = [s for s in steps if not s.get("failed") and s["loss_pct"] < UDP_MAX_LOSS_PCT]
            best = max(good, key=lambda s: s["mbps"]) if good else None
            run["udp"] = {
                "max_loss_pct": UDP_MAX_LOSS_PCT,
                "mbps": best["mbps"] if best else None,
                "loss_pct": best["loss_pct"] if best else None,
                "steps": steps,
            }
        out["runs"].append(run)

    order = {s: i for i, s in enumerate(SERVERS)}
    ciphers = []
    for r in out["runs"]:
        if r["cipher"] not in ciphers:
            ciphers.append(r["cipher"])
    out["runs"].sort(key=lambda r: (order.get(r["server"], 9), ciphers.index(r["cipher"])))
    by = {(r["server"], r["cipher"]): r for r in out["runs"]}

    for c in ciphers:
        a, b = by.get(("ovpnd", c)), by.get(("openvpn", c))
        if not a or not b:
            continue
        cmp_ = {"cipher": c}
        for k in ("tcp_c2s", "tcp_s2c"):
            cmp_[k + "_ratio"] = ratio(mbps(a.get(k)), mbps(b.get(k)))
        cmp_["udp_ratio"] = ratio((a.get("udp") or {}).get("mbps"),
                                  (b.get("udp") or {}).get("mbps"))
        for k in ("server_cpu_s_per_gb", "client_cpu_s_per_gb"):
            cmp_[k + "_ratio"] = ratio(a.get(k), b.get(k))
        for d in ("c2s", "s2c"):
            la, lb = a.get("load_" + d), b.get("load_" + d)
            if not la or not lb:
                continue
            pa, pb = la.get("ping") or {}, lb.get("ping") or {}
            cmp_["load_" + d] = {
                "ping_median_ratio": ratio(pa.get("median_ms"), pb.get("median_ms")),
                "ping_p95_ratio": ratio(pa.get("p95_ms"), pb.get("p95_ms")),
                "mbps_ratio": ratio(la.get("mbps"), lb.get("mbps")),
                "server_cpu_s_per_gb_ratio": ratio(la.get("server_cpu_s_per_gb"),
                                                   lb.get("server_cpu_s_per_gb")),
            }
        ar, br = a.get("added_rtt_ms"), b.get("added_rtt_ms")
        cmp_["added_rtt_diff_ms"] = ar - br if ar is not None and br is not None else None
        out["comparison"].append(cmp_)

    other = meta.get("other_server")
    for c in ciphers:
        a, b = by.get((other, c)), by.get(("ovpnd", c))
        if not other or not a or not b:
            continue
        cmp_ = {"cipher": c, "server": other}
        for k in ("tcp_c2s", "tcp_s2c"):
            cmp_[k + "_ratio"] = ratio(mbps(a.get(k)), mbps(b.get(k)))
        cmp_["udp_ratio"] = ratio((a.get("udp") or {}).get("mbps"),
                                  (b.get("udp") or {}).get("mbps"))
        cmp_["server_cpu_s_per_gb_ratio"] = ratio(a.get("server_cpu_s_per_gb"),
                                                  b.get("server_cpu_s_per_gb"))
        out["backend_comparison"].append(cmp_)

    for server, kv in loadgen.items():
        ent = {"exit_status": num(kv.get("exit_status", "-1"))}
        ent["rate_limited"] = kv.get("rate_limited") == "1"
        if "server_cpu_s" in kv:
            ent["server_cpu_s"] = num(kv["server_cpu_s"])
        if "server_ping_timeouts" in kv:
            ent["server_ping_timeouts"] = num(kv["server_ping_timeouts"])
        paths = [v for k, v in sorted(kv.items(), key=lambda kv_: kv_[0])
                 if k == "json" or k.startswith("json.")]
        reports = []
        per_client = []
        for path in paths:
            try:
                with open(path, encoding="utf-8") as f:
                    lg = json.load(f)
                per_client += lg.pop("per_client", None) or []
                reports.append(lg)
            except (OSError, ValueError):
                pass
        if not reports or len(reports) != len(paths):
            ent["error"] = "no JSON report" if not reports else "a JSON report is missing"
        if reports:
            ent.update(merge_loadgen(reports))
            ent.update(connect_pace(per_client, read_thread_samples(kv.get("thread_samples", "")),
                                    hz))
        if isinstance(ent.get("server_cpu_s"), (int, float)) and ent.get("connected"):
            # server CPU over the run / connected clients: with --data-rate 0 and a short
            # hold, the server CPU one connect (handshake) costs
            ent["server_cpu_ms_per_client"] = 1000.0 * ent["server_cpu_s"] / ent["connected"]
        out["loadgen"][server] = ent
    for server, kv in churn.items():
        out["churn"][server] = churn_rounds(kv)
    return out


def churn_rounds(kv):
    """The rounds of bench.sh --churn for one server: round 0 is the idle server before the
    first round; connected and failed come from each round's load-generator report."""
    rounds = []
    r = 0
    while "rss_kb.%d" % r in kv:
        ent = {"round": r, "rss_kb": num(kv["rss_kb.%d" % r]),
               "fds": num(kv.get("fds.%d" % r, "-")),
               "listed": num(kv.get("listed.%d" % r, "-"))}
        path = kv.get("json.%d" % r)
        if path:
            try:
                with open(path, encoding="utf-8") as f:
                    lg = json.load(f)
                ent["connected"] = lg.get("connected")
                ent["failed"] = lg.get("failed")
            except (OSError, ValueError):
                ent["error"] = "no JSON report"
        rounds.append(ent)
        r += 1
    res = {"rounds": rounds}
    if len(rounds) >= 3 and all(isinstance(e["rss_kb"], (int, float)) for e in rounds):
        first, last = rounds[1]["rss_kb"], rounds[-1]["rss_kb"]
        res["last_over_first_pct"] = 100.0 * (last - first) / first if first else None
        res["last_minus_first_mb"] = (last - first) / 1024.0
    return res


LOADGEN_SUMS = ("clients", "connected", "failed", "completed", "clients_with_echo", "sent",
                "echoed", "echoed_steady", "push_replies", "push_requests", "pings_rx",
                "pings_tx", "retransmits", "drops", "early_data", "other_rx", "send_errors",
                "data_pps")


PACE_WINDOW = 1000  # connects per handshake-rate window (first and last of the run)
CPU_WINDOW_SHARE = 10  # the server-CPU windows: a tenth of the connects (at least PACE_WINDOW)
WORKER_THREAD_PREFIX = "ovpnd-worker"  # ovpnd's data-plane threads; the rest is control


def read_thread_samples(path):
    """[(t_ms, {thread name: ticks})] from a sample-threads file, in time order ([] if none)."""
    samples = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    r = json.loads(line)
                    samples.append((float(r["t_ms"]), dict(r["ticks"])))
                except (ValueError, KeyError, TypeError):
                    continue  # the last line may be cut by the kill
    except OSError:
        return []
    return sorted(samples, key=lambda s_: s_[0])


def ticks_at(samples, t_ms, pick):
    """The ticks of the threads pick() selects at time t_ms, linear between the two samples
    around it; None outside the sampled time."""
    if not samples or t_ms < samples[0][0] or t_ms > samples[-1][0]:
        return None
    for (t0, a), (t1, b) in zip(samples, samples[1:]):
        if t0 <= t_ms <= t1:
            va = sum(v for k, v in a.items() if pick(k))
            vb = sum(v for k, v in b.items() if pick(k))
            return va if t1 == t0 else va + (vb - va) * (t_ms - t0) / (t1 - t0)
    return None


def cpu_windows(at, samples, hz):
    """Server CPU per connect (ms) over the first and the last tenth of the connects (times at,
    sorted): all threads, and the control threads alone (all but ovpnd's workers, whose share
    grows with the keepalives of the clients held). The rate of the same windows."""
    out = {}
    w = max(PACE_WINDOW, len(at) // CPU_WINDOW_SHARE)
    if len(at) < 2 * w or len(samples) < 2:
        return out
    out["cpu_window"] = w
    for name, i, j in (("first", 0, w - 1), ("last", len(at) - w, len(at) - 1)):
        if at[j] > at[i]:
            out["handshakes_per_sec_%s_window" % name] = (j - i) * 1000.0 / (at[j] - at[i])
        for kind, pick in (("all", lambda k: True),
                           ("control", lambda k: not k.startswith(WORKER_THREAD_PREFIX))):
            a, b = ticks_at(samples, at[i], pick), ticks_at(samples, at[j], pick)
            if a is not None and b is not None:
                out["server_cpu_ms_per_connect_%s_%s" % (name, kind)] = \
                    (b - a) / hz * 1000.0 / (j - i)
    return out


def sample_threads(pid, out_path, interval_s=0.5):
    """The sample-threads command (see the module's comment)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    task_dir = "/proc/%d/task" % pid
    with open(out_path, "w", encoding="utf-8") as out:
        while os.path.isdir(task_dir):
            ticks = {}
            try:
                tids = os.listdir(task_dir)
            except OSError:
                break
            for tid in tids:
                try:
                    with open("%s/%s/stat" % (task_dir, tid), encoding="utf-8") as f:
                        st = f.read()
                except OSError:
                    continue  # the thread ended
                name = st[st.index("(") + 1:st.rindex(")")]
                fields = st[st.rindex(")") + 2:].split()
                ticks[name] = ticks.get(name, 0) + int(fields[11]) + int(fields[12])
            out.write(json.dumps({"t_ms": time.monotonic() * 1000.0, "ticks": ticks}) + "\n")
            out.flush()
            time.sleep(interval_s)
    return 0


def connect_pace(per_client, samples=(), hz=100.0):
    """From every client's times (ms of one monotonic clock, the same in all the load
    generators of a run): the handshake rate over the first PACE_WINDOW connects and over the
    last PACE_WINDOW (with nearly everyone else connected already), and the EXIT burst at the
    end: how many EXITs were acknowledged and how long after the first EXIT the last
    acknowledgment came."""
    out = {}
    at = sorted(c["connected_at_ms"] for c in per_client
                if isinstance(c.get("connected_at_ms"), (int, float)) and c["connected_at_ms"] > 0)
    if len(at) >= 2 * PACE_WINDOW:
        def rate(i, j):
            return (j - i) * 1000.0 / (at[j] - at[i]) if at[j] > at[i] else None
        out["handshakes_per_sec_first"] = rate(0, PACE_WINDOW - 1)
        out["handshakes_per_sec_last"] = rate(len(at) - PACE_WINDOW, len(at) - 1)
        out["pace_window"] = PACE_WINDOW
        out.update(cpu_windows(at, samples, hz))
    exits = [c["exit_at_ms"] for c in per_client
             if isinstance(c.get("exit_at_ms"), (int, float)) and c["exit_at_ms"] > 0]
    acks = [c["exit_acked_at_ms"] for c in per_client
            if isinstance(c.get("exit_acked_at_ms"), (int, float)) and c["exit_acked_at_ms"] > 0]
    if exits:
        out["exits_sent"] = len(exits)
        out["exits_sent_within_secs"] = (max(exits) - min(exits)) / 1000.0
        out["exits_acked"] = len(acks)
        if acks:
            out["exit_ack_all_secs"] = (max(acks) - min(exits)) / 1000.0
    return out


def merge_loadgen(reports):
    """One report from the reports of several ovpnd-loadgen processes that ran side by side
    (started together, their steady phases joined by a barrier): counts and rates add up, the
    time to connect all is the longest one, the server RSS the highest sample, divided by all
    connected clients."""
    if len(reports) == 1:
        return dict(reports[0], processes=1)
    m = {"processes": len(reports)}
    for k in LOADGEN_SUMS:
        vals = [r.get(k) for r in reports if isinstance(r.get(k), (int, float))]
        if vals:
            m[k] = sum(vals)
    secs = [r.get("connect_all_secs") for r in reports
            if isinstance(r.get("connect_all_secs"), (int, float))]
    if secs and m.get("connected"):
        m["connect_all_secs"] = max(secs)
        m["handshakes_per_sec"] = m["connected"] / max(secs) if max(secs) > 0 else None
    steady = [r.get("steady_secs") for r in reports
              if isinstance(r.get("steady_secs"), (int, float))]
    if steady:
        m["steady_secs"] = min(steady)
    rss = [r.get("server_rss_kb") for r in reports
           if isinstance(r.get("server_rss_kb"), (int, float))]
    if rss:
        m["server_rss_kb"] = max(rss)
        if m.get("connected"):
            m["rss_per_client_kb"] = max(rss) / m["connected"]
    fails = {}
    for r in reports:
        for reason, n in (r.get("failures") or {}).items():
            fails[reason] = fails.get(reason, 0) + n
    m["failures"] = fails
    m["all_connected"] = m.get("connected") == m.get("clients")
    return m


def mbps(res):
    return res.get("mbps") if res else None


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.*f" % (nd, v)
    return str(v)


def fmt_x(v):
    return "-" if v is None else "%.2fx" % v


def rtt_cell(r):
    if r.get("rtt_median_ms") is None:
        return fmt(r.get("rtt_ms"), 3)
    return "%s (%s)" % (fmt(r.get("rtt_ms"), 3), fmt(r.get("rtt_median_ms"), 3))


def markdown(out):
    m = out["meta"]
    lines = []
    if out["runs"] or out["direct"]:
        lines.append("ovpnd vs openvpn %s, %s, %s CPUs, TCP %s s per direction%s%s, %s" % (
            m.get("openvpn_version", "?"), m.get("date", "?"), m.get("cpus", "?"),
            m.get("tcp_secs", "?"),
            " at %s Mbit/s" % m["tcp_rate_mbps"] if m.get("tcp_rate_mbps") else "",
            ", UDP %s s per step" % m["udp_secs"] if m.get("udp_secs") else ", no UDP search",
            "workers %s" % m["workers"] if m.get("workers") not in (None, "", "-") else
            "ovpnd workers default"))
        if m.get("ovpnd_env"):
            lines.append("")
            lines.append("ovpnd run with %s" % m["ovpnd_env"])
        if m.get("ovpnd_data_crypto"):
            lines.append("")
            lines.append("ovpnd data channel on %s%s" % (
                m["ovpnd_data_crypto"], "; %s on %s" % (
                    m["other_server"], m.get("other_data_crypto")) if m.get("other_server") else ""))
        lines.append("")
        lines.append("| server | cipher | TCP c->s Mbit/s | TCP s->c Mbit/s "
                     "| UDP c->s Mbit/s (<1% loss) "
                     "| server CPU s/GB | client CPU s/GB | RTT ms avg (median) | added RTT ms |")
        lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        d = out["direct"]
        lines.append("| direct (no VPN) | - | %s | %s | - | - | - | %s | - |" % (
            fmt(mbps(d.get("tcp_c2s")), 0), fmt(mbps(d.get("tcp_s2c")), 0), rtt_cell(d)))
        for r in out["runs"]:
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["server"], r["cipher"], fmt(mbps(r.get("tcp_c2s")), 0),
                fmt(mbps(r.get("tcp_s2c")), 0),
                fmt((r.get("udp") or {}).get("mbps"), 0), fmt(r.get("server_cpu_s_per_gb"), 2),
                fmt(r.get("client_cpu_s_per_gb"), 2), rtt_cell(r),
                fmt(r.get("added_rtt_ms"), 3)))
        rate = m.get("tcp_rate_mbps")
        short = ["%s %s %s %s Mbit/s" % (r["server"], r["cipher"], d, fmt(mbps(r.get(k)), 0))
                 for r in out["runs"] for d, k in (("c->s", "tcp_c2s"), ("s->c", "tcp_s2c"))
                 if rate and mbps(r.get(k)) is not None and mbps(r.get(k)) < 0.95 * rate]
        if short:
            lines.append("")
            lines.append("below the --rate of %s Mbit/s, so not at equal load: %s" % (
                rate, "; ".join(short)))
        if out["comparison"]:
            lines.append("")
            lines.append("ovpnd relative to openvpn (throughput and CPU: ovpnd / openvpn; "
                         "added RTT: ovpnd - openvpn):")
            lines.append("")
            lines.append("| cipher | TCP c->s | TCP s->c | UDP c->s | server CPU s/GB "
                         "| client CPU s/GB "
                         "| added RTT ms |")
            lines.append("|---|---:|---:|---:|---:|---:|---:|")
            for c in out["comparison"]:
                diff = c.get("added_rtt_diff_ms")
                lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                    c["cipher"], fmt_x(c["tcp_c2s_ratio"]), fmt_x(c["tcp_s2c_ratio"]),
                    fmt_x(c["udp_ratio"]), fmt_x(c["server_cpu_s_per_gb_ratio"]),
                    fmt_x(c["client_cpu_s_per_gb_ratio"]), "-" if diff is None else "%+.3f" % diff))
        if any(r.get("load_c2s") or r.get("load_s2c") for r in out["runs"]):
            lines.extend(load_table(out))
        if out["backend_comparison"]:
            lines.append("")
            lines.append("%s (%s) relative to ovpnd (%s), throughput and server CPU per GB "
                         "as %s / ovpnd:" % (m.get("other_server"), m.get("other_data_crypto"),
                                             m.get("ovpnd_data_crypto"), m.get("other_server")))
            lines.append("")
            lines.append("| cipher | TCP c->s | TCP s->c | UDP c->s | server CPU s/GB |")
            lines.append("|---|---:|---:|---:|---:|")
            for c in out["backend_comparison"]:
                lines.append("| %s | %s | %s | %s | %s |" % (
                    c["cipher"], fmt_x(c["tcp_c2s_ratio"]), fmt_x(c["tcp_s2c_ratio"]),
                    fmt_x(c["udp_ratio"]), fmt_x(c["server_cpu_s_per_gb_ratio"])))
    else:
        lines.append("ovpnd vs openvpn %s, %s, %s CPUs, load generator only (load average %s "
                     "before, %s after)" % (
                         m.get("openvpn_version", "?"), m.get("date", "?"), m.get("cpus", "?"),
                         m.get("loadavg_start", "?"), m.get("loadavg_end", "?")))
    if out["loadgen"]:
        lines.append("")
        conc = m.get("loadgen_concurrency")
        lines.append("ovpnd-loadgen, %s simulated clients (duplicate-cn), %s certificates, %s, "
                     "all held connected for %s s with ICMP echo at %s/s per client:" % (
                         m.get("clients", "?"),
                         "RSA 2048" if m.get("pki") == "rsa" else "EC P-256",
                         "all started at once" if conc in (0, None) else
                         "at most %s handshakes in flight" % conc,
                         m.get("loadgen_secs", "?"), m.get("loadgen_pps_per_client", "?")))
        lines.append("")
        lines.append("| server | connected | failed | handshakes/s | connect_all_secs "
                     "| data_pps (replies/s) | keepalive pings received "
                     "| server RSS MB | rss_per_client_kb | server CPU ms per connect |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for s in SERVERS:
            e = out["loadgen"].get(s)
            if e is None:
                continue
            rss = e.get("server_rss_kb")
            lines.append("| %s | %s/%s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                s, fmt(e.get("connected")), fmt(e.get("clients")), fmt(e.get("failed")),
                fmt(e.get("handshakes_per_sec")), fmt(e.get("connect_all_secs"), 3),
                fmt(e.get("data_pps")), fmt(e.get("pings_rx")),
                fmt(rss / 1024.0 if isinstance(rss, (int, float)) else None),
                fmt(e.get("rss_per_client_kb")), fmt(e.get("server_cpu_ms_per_client"))))
        for s in SERVERS:
            e = out["loadgen"].get(s) or {}
            if e.get("handshakes_per_sec_last") is not None:
                lines.append("")
                lines.append("%s: handshakes/s over the first %d connects %s, over the last %d "
                             "(%s already connected) %s: %s" % (
                                 s, e["pace_window"], fmt(e.get("handshakes_per_sec_first")),
                                 e["pace_window"], fmt(e.get("connected")),
                                 fmt(e.get("handshakes_per_sec_last")),
                                 fmt_x(ratio(e.get("handshakes_per_sec_last"),
                                             e.get("handshakes_per_sec_first")))))
            if e.get("server_cpu_ms_per_connect_last_all") is not None:
                lines.append("")
                lines.append("%s: over the first %d connects and the last %d: %s and %s "
                             "handshakes/s (%s), server CPU per connect %s and %s ms (%s), of it "
                             "the control threads %s and %s ms (%s)" % (
                                 s, e["cpu_window"], e["cpu_window"],
                                 fmt(e.get("handshakes_per_sec_first_window")),
                                 fmt(e.get("handshakes_per_sec_last_window")),
                                 fmt_x(ratio(e.get("handshakes_per_sec_last_window"),
                                             e.get("handshakes_per_sec_first_window"))),
                                 fmt(e.get("server_cpu_ms_per_connect_first_all"), 2),
                                 fmt(e.get("server_cpu_ms_per_connect_last_all"), 2),
                                 fmt_x(ratio(e.get("server_cpu_ms_per_connect_last_all"),
                                             e.get("server_cpu_ms_per_connect_first_all"))),
                                 fmt(e.get("server_cpu_ms_per_connect_first_control"), 2),
                                 fmt(e.get("server_cpu_ms_per_connect_last_control"), 2),
                                 fmt_x(ratio(e.get("server_cpu_ms_per_connect_last_control"),
                                             e.get("server_cpu_ms_per_connect_first_control")))))
            if e.get("exits_sent"):
                lines.append("")
                lines.append("%s: EXIT burst: %s EXITs sent within %s s, %s acknowledged, the "
                             "last %s s after the first EXIT" % (
                                 s, fmt(e.get("exits_sent")), fmt(e.get("exits_sent_within_secs")),
                                 fmt(e.get("exits_acked")), fmt(e.get("exit_ack_all_secs"))))
        a, b = out["loadgen"].get("ovpnd") or {}, out["loadgen"].get("openvpn") or {}
        cpu_x = ratio(a.get("server_cpu_ms_per_client"), b.get("server_cpu_ms_per_client"))
        hs_x = ratio(a.get("handshakes_per_sec"), b.get("handshakes_per_sec"))
        if cpu_x is not None or hs_x is not None:
            lines.append("")
            lines.append("ovpnd / openvpn: server CPU per connect %s, handshakes/s %s" % (
                fmt_x(cpu_x), fmt_x(hs_x)))
        for s in SERVERS:
            e = out["loadgen"].get(s) or {}
            if e.get("failures"):
                lines.append("")
                lines.append("%s: failed clients: %s" % (s, ", ".join(
                    "%d x %s" % (n, r) for r, n in sorted(e["failures"].items()))))
            if e.get("server_ping_timeouts"):
                lines.append("")
                lines.append("%s dropped %d clients for ping-restart" % (
                    s, e["server_ping_timeouts"]))
        limited = [s for s in SERVERS if (out["loadgen"].get(s) or {}).get("rate_limited")]
        if limited:
            lines.append("")
            lines.append("Note: %s dropped handshake packets under its connect-freq-initial "
                         "limit (openvpn 2.6 default: 100 new clients per 10 s), so its "
                         "handshake rate shows that limit." % ", ".join(limited))
    if out["churn"]:
        lines.extend(churn_table(out))
    return "\n".join(lines)


def load_table(out):
    """Markdown lines: ping under a saturating TCP run per direction, and ovpnd / openvpn."""
    m = out["meta"]
    lines = ["", "Latency under load: a ping every %s s through the tunnel during each TCP run "
             "(from its second 1; load average %s before, %s after). Queues: medians of the "
             "0.5 s samples (UDP receive queues of the tunnel's sockets; the iperf3 sender's "
             "srtt and unacked data):" % (m.get("ping_interval_s", "?"),
                                          m.get("loadavg_start", "?"), m.get("loadavg_end", "?")),
             "",
             "| server | cipher | load | Mbit/s | server CPU s/GB | ping median ms "
             "| ping p95 ms | pings (lost %) | sender srtt ms | sender unacked kB "
             "| client UDP Recv-Q kB (drops) | server UDP Recv-Q kB (drops) "
             "| TUN drops client, server |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in out["runs"]:
        for d, name in (("c2s", "upload (c->s)"), ("s2c", "download (s->c)")):
            e = r.get("load_" + d)
            if not e:
                continue
            p = e.get("ping") or {}
            q = e.get("queues") or {}
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s (%s) "
                         "| %s (%s) | %s, %s |" % (
                r["server"], r["cipher"], name, fmt(e.get("mbps"), 0),
                fmt(e.get("server_cpu_s_per_gb"), 2), fmt(p.get("median_ms"), 2),
                fmt(p.get("p95_ms"), 2), fmt(p.get("count")), fmt(p.get("loss_pct")),
                fmt(q.get("sender_srtt_ms"), 2), fmt(q.get("sender_unacked_kb"), 0),
                fmt(q.get("client_udp_recvq_kb"), 0), fmt(q.get("client_udp_drops")),
                fmt(q.get("server_udp_recvq_kb"), 0), fmt(q.get("server_udp_drops")),
                fmt(q.get("client_tun_drops")), fmt(q.get("server_tun_drops"))))
    cmps = [c for c in out["comparison"] if c.get("load_c2s") or c.get("load_s2c")]
    if cmps:
        lines += ["", "Under load, ovpnd / openvpn (targets: ping median and p95 at most 0.8x, "
                  "throughput at least 1.4x, server CPU per GB at most 0.3x):", "",
                  "| cipher | load | ping median | ping p95 | Mbit/s | server CPU s/GB |",
                  "|---|---|---:|---:|---:|---:|"]
        for c in cmps:
            for d, name in (("c2s", "upload (c->s)"), ("s2c", "download (s->c)")):
                e = c.get("load_" + d)
                if not e:
                    continue
                lines.append("| %s | %s | %s | %s | %s | %s |" % (
                    c["cipher"], name, fmt_x(e["ping_median_ratio"]), fmt_x(e["ping_p95_ratio"]),
                    fmt_x(e["mbps_ratio"]), fmt_x(e["server_cpu_s_per_gb_ratio"])))
    return lines


def churn_table(out):
    """Markdown lines: the server's RSS and fds with nobody connected after each round."""
    m = out["meta"]
    present = [s for s in SERVERS if s in out["churn"]]
    lines = ["", "Churn: %s rounds of %s clients (duplicate-cn, at most %s handshakes in flight, "
             "held %s s with ICMP echo at %s/s per client, then an explicit exit); the "
             "server's RSS (MB) and open file descriptors %s s after each round ends, with "
             "nobody connected (round 0: before the first; \"listed\": clients the status "
             "file still shows, when not 0):" % (
                 m.get("churn_rounds", "?"), m.get("clients", "?"),
                 m.get("loadgen_concurrency", "?"), m.get("loadgen_secs", "?"),
                 m.get("loadgen_pps_per_client", "?"), m.get("churn_settle_s", "?")), ""]
    head = "| round |"
    rule = "|---:|"
    for s in present:
        head += " %s RSS MB | %s fds | %s connected |" % (s, s, s)
        rule += "---:|---:|---:|"
    lines += [head, rule]
    n = max(len(out["churn"][s]["rounds"]) for s in present)
    for r in range(n):
        row = "| %d |" % r
        for s in present:
            rounds = out["churn"][s]["rounds"]
            e = rounds[r] if r < len(rounds) else {}
            rss = e.get("rss_kb")
            cell = fmt(rss / 1024.0 if isinstance(rss, (int, float)) else None)
            if isinstance(e.get("listed"), (int, float)) and e["listed"] > 0:
                cell += " (%d listed)" % e["listed"]
            conn = "-" if r == 0 or e.get("connected") is None else "%s/%s" % (
                fmt(e.get("connected")), m.get("clients", "?"))
            row += " %s | %s | %s |" % (cell, fmt(e.get("fds")), conn)
        lines.append(row)
    for s in present:
        c = out["churn"][s]
        if c.get("last_over_first_pct") is not None:
            lines.append("")
            lines.append("%s: after the last round %+.1f MB (%+.1f%%) against the first." % (
                s, c["last_minus_first_mb"], c["last_over_first_pct"]))
    return lines


def write_plot(out, prefix):
    """PREFIX.dat (one row per cipher, one column per server and direction) and PREFIX.gp."""
    metrics = [("tcp_c2s", "TCP c->s"), ("tcp_s2c", "TCP s->c")]
    if any(r.get("udp") for r in out["runs"]):
        metrics.append(("udp", "UDP c->s"))
    colours = {"ovpnd": ("#1f4e99", "#3c78d8", "#8db3f0"),
               "ovpnd-mbedtls": ("#2f6b3a", "#4f9d5d", "#9fd3a8"),
               "ovpnd-openssl": ("#2f6b3a", "#4f9d5d", "#9fd3a8"),
               "openvpn": ("#b45309", "#e69138", "#f6c48a")}
    present = {r["server"] for r in out["runs"]}
    series = []
    for i, (k, label) in enumerate(metrics):
        for s in SERVERS:
            if s not in present:
                continue
            series.append((s, k, "%s %s" % (s, label), colours[s][i]))
    by = {(r["server"], r["cipher"]): r for r in out["runs"]}
    ciphers = []
    for r in out["runs"]:
        if r["cipher"] not in ciphers:
            ciphers.append(r["cipher"])
    with open(prefix + ".dat", "w", encoding="utf-8") as f:
        f.write("cipher\t" + "\t".join('"%s"' % t for _, _, t, _ in series) + "\n")
        for c in ciphers:
            vals = []
            for s, k, _, _ in series:
                v = mbps((by.get((s, c)) or {}).get(k))
                vals.append("%.1f" % v if v is not None else "NaN")
            f.write(c + "\t" + "\t".join(vals) + "\n")
    direct = mbps(out["direct"].get("tcp_c2s"))
    with open(prefix + ".gp", "w", encoding="utf-8") as f:
        f.write("set terminal png size 1000,600\n")
        f.write("set output '%s.png'\n" % prefix)
        f.write("set title 'Throughput through the tunnel: ovpnd vs openvpn %s'\n" %
                out["meta"].get("openvpn_version", ""))
        f.write("set ylabel 'Mbit/s'\nset yrange [0:*]\nset grid ytics\n")
        f.write("set style data histogram\nset style histogram clustered gap 1\n")
        f.write("set style fill solid 0.8 border -1\nset key outside right top\n")
        f.write("set datafile missing 'NaN'\n")
        if direct:
            f.write("set label 1 'direct TCP (no VPN): %.0f Mbit/s' at graph 0.01, graph 0.97\n" %
                    direct)
        cols = ", ".join(
            ("'%s.dat' using %d:xtic(1)" % (prefix, i + 2) if i == 0 else "'' using %d" % (i + 2))
            + " title columnheader(%d) linecolor rgb '%s'" % (i + 2, series[i][3])
            for i in range(len(series)))
        f.write("plot " + cols + "\n")


def cmd_report(args):
    out = build(read_records(args.records))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2, sort_keys=False)
            f.write("\n")
    if args.plot:
        write_plot(out, args.plot)
    print(markdown(out))
    return 0

# The targets of the latency-under-load comparison (docs/benchmarks.md): ratio ovpnd / openvpn
# at most (ping, CPU) or at least (throughput) these, per direction.
LOAD_TARGETS = (("ping_median_ratio", "ping median", 0.8, False),
                ("ping_p95_ratio", "ping p95", 0.8, False),
                ("mbps_ratio", "Mbit/s", 1.4, True),
                ("server_cpu_s_per_gb_ratio", "server CPU s/GB", 0.3, False))
PLAIN_RATIOS = (("tcp_c2s_ratio", "TCP c->s"), ("tcp_s2c_ratio", "TCP s->c"),
                ("udp_ratio", "UDP c->s"), ("server_cpu_s_per_gb_ratio", "server CPU s/GB"))


def median_of(xs):
    xs = sorted(x for x in xs if x is not None)
    return quantile(xs, 0.5)


def cmd_repeat(args):
    runs = []
    for path in args.runs:
        with open(path, encoding="utf-8") as f:
            runs.append(json.load(f))
    has_load = any(c.get("load_c2s") or c.get("load_s2c")
                   for r in runs for c in r.get("comparison", []))
    lines = ["", "%d runs, ovpnd / openvpn per run (%s to %s):" % (
        len(runs), runs[0]["meta"].get("date", "?"), runs[-1]["meta"].get("date", "?")), ""]
    medians = {}
    if has_load:
        lines += ["| run | load avg before-after | cipher | load | ping median | ping p95 "
                  "| Mbit/s (ovpnd, openvpn) | server CPU s/GB |",
                  "|---:|---|---|---|---:|---:|---:|---:|"]
        cols = {}
        for i, r in enumerate(runs, 1):
            mbit = {(x["server"], x["cipher"], d): (x.get("load_" + d) or {}).get("mbps")
                    for x in r.get("runs", []) for d in ("c2s", "s2c")}
            for c in r.get("comparison", []):
                for d, name in (("c2s", "upload"), ("s2c", "download")):
                    e = c.get("load_" + d)
                    if not e:
                        continue
                    for key, _, _, _ in LOAD_TARGETS:
                        cols.setdefault((c["cipher"], d, key), []).append(e.get(key))
                    lines.append("| %d | %s-%s | %s | %s | %s | %s | %s (%s, %s) | %s |" % (
                        i, r["meta"].get("loadavg_start", "?"), r["meta"].get("loadavg_end", "?"),
                        c["cipher"], name, fmt_x(e.get("ping_median_ratio")),
                        fmt_x(e.get("ping_p95_ratio")), fmt_x(e.get("mbps_ratio")),
                        fmt(mbit.get(("ovpnd", c["cipher"], d)), 0),
                        fmt(mbit.get(("openvpn", c["cipher"], d)), 0),
                        fmt_x(e.get("server_cpu_s_per_gb_ratio"))))
        lines += ["", "Medians over the runs, and the runs that met each target (ping median "
                  "and p95 at most 0.8x, throughput at least 1.4x, server CPU per GB at most "
                  "0.3x):", "",
                  "| cipher | load | ping median | ping p95 | Mbit/s | server CPU s/GB |",
                  "|---|---|---:|---:|---:|---:|"]
        for cipher, d in sorted({(k[0], k[1]) for k in cols}, key=lambda k: (k[0], k[1] != "c2s")):
            cells = []
            for key, _, limit, at_least in LOAD_TARGETS:
                xs = [x for x in cols[(cipher, d, key)] if x is not None]
                m = median_of(xs)
                met = sum(1 for x in xs if (x >= limit if at_least else x <= limit))
                medians.setdefault(cipher, {}).setdefault("load_" + d, {})[key] = m
                medians[cipher]["load_" + d][key + "_runs_met"] = met
                cells.append("%s (%d of %d)" % (fmt_x(m), met, len(xs)))
            lines.append("| %s | %s | %s |" % (cipher, "upload" if d == "c2s" else "download",
                                               " | ".join(cells)))
    else:
        lines += ["| run | cipher | %s |" % " | ".join(n for _, n in PLAIN_RATIOS),
                  "|---:|---|%s" % ("---:|" * len(PLAIN_RATIOS))]
        cols = {}
        for i, r in enumerate(runs, 1):
            for c in r.get("comparison", []):
                for key, _ in PLAIN_RATIOS:
                    cols.setdefault((c["cipher"], key), []).append(c.get(key))
                lines.append("| %d | %s | %s |" % (i, c["cipher"], " | ".join(
                    fmt_x(c.get(key)) for key, _ in PLAIN_RATIOS)))
        for cipher in sorted({k[0] for k in cols}):
            for key, _ in PLAIN_RATIOS:
                medians.setdefault(cipher, {})[key] = median_of(cols[(cipher, key)])
            lines.append("| median | %s | %s |" % (cipher, " | ".join(
                fmt_x(medians[cipher][key]) for key, _ in PLAIN_RATIOS)))
    print("\n".join(lines))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"runs": runs, "medians": medians}, f, indent=2)
            f.write("\n")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("iperf")
    pi.add_argument("file")
    ps = sub.add_parser("sample-threads")
    ps.add_argument("pid", type=int)
    ps.add_argument("out")
    pr = sub.add_parser("report")
    pr.add_argument("--records", required=True)
    pr.add_argument("--json")
    pr.add_argument("--plot")
    pp = sub.add_parser("repeat")
    pp.add_argument("--json")
    pp.add_argument("runs", nargs="+")
    args = p.parse_args()
    if args.cmd == "repeat":
        return cmd_repeat(args)
    if args.cmd == "sample-threads":
        return sample_threads(args.pid, args.out)
    return cmd_iperf(args) if args.cmd == "iperf" else cmd_report(args)


if __name__ == "__main__":
    sys.exit(main())
