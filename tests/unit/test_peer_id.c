/* tests/unit/test_peer_id.c: the peer_id layout (server/thread/peer_id.h) and its mirror in the
 * kernel's reuseport steering program (server/data/udp.c) agree: the program, run here by a
 * small classic-BPF interpreter with the kernel's rules for the instructions it uses, sends each
 * P_DATA_V2 to socket 1 + peer_id_worker() and everything else to the acceptor's socket 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <linux/filter.h>

#include "proto/packet.h"
#include "server/data/udp.h"
#include "server/thread/peer_id.h"

/* Runs prog over pkt as the kernel does for SO_ATTACH_REUSEPORT_CBPF: a load beyond the packet
 * ends the program with 0; division by zero is refused when the program is attached, so it
 * fails the test here. Only the instruction classes the steering program may use. */
static uint32_t run_cbpf(const struct sock_filter *prog, size_t n, const uint8_t *pkt, size_t len)
{
    uint32_t a = 0;

    for (size_t pc = 0; pc < n; pc++) {
        const struct sock_filter *f = &prog[pc];

        switch (f->code) {
        case BPF_LD | BPF_B | BPF_ABS:
            if (f->k >= len) {
                return 0;
            }
            a = pkt[f->k];
            break;
        case BPF_LD | BPF_W | BPF_ABS:
            if (len < 4 || f->k > len - 4) {
                return 0;
            }
            a = (uint32_t)pkt[f->k] << 24 | (uint32_t)pkt[f->k + 1] << 16 |
                (uint32_t)pkt[f->k + 2] << 8 | pkt[f->k + 3];
            break;
        case BPF_ALU | BPF_RSH | BPF_K:
            a >>= f->k;
            break;
        case BPF_ALU | BPF_AND | BPF_K:
            a &= f->k;
            break;
        case BPF_ALU | BPF_ADD | BPF_K:
            a += f->k;
            break;
        case BPF_ALU | BPF_MOD | BPF_K:
            assert_int_not_equal(f->k, 0);
            a %= f->k;
            break;
        case BPF_JMP | BPF_JEQ | BPF_K:
            pc += a == f->k ? f->jt : f->jf;
            break;
        case BPF_RET | BPF_K:
            return f->k;
        case BPF_RET | BPF_A:
            return a;
        default:
            fail_msg("instruction 0x%04x not known to this interpreter", f->code);
        }
    }
    fail_msg("the program ran off its end");
    return 0;
}

static void make_and_split(void **state)
{
    (void)state;
    for (int n_workers = 1; n_workers <= 8; n_workers++) {
        for (size_t local = 0; local < 3000; local += 7) {
            for (int w = 0; w < n_workers; w++) {
                uint32_t id = peer_id_make(local, w, n_workers);

                assert_int_equal(peer_id_worker(id, n_workers), w);
                assert_int_equal(peer_id_local(id, n_workers), local);
            }
        }
    }
}

static void steering_program_agrees(void **state)
{
    struct sock_filter prog[UDP_STEERING_PROGRAM_MAX];
    uint8_t pkt[64] = {0};

    (void)state;
    for (unsigned n_workers = 1; n_workers <= 16; n_workers++) {
        size_t n = udp_steering_program(n_workers, prog, UDP_STEERING_PROGRAM_MAX);

        assert_true(n > 0);
        for (uint32_t id = 0; id <= 0xFFFFFFu; id += 4099) {
            for (uint8_t key_id = 0; key_id < 8; key_id += 3) {
                pkt[0] = (uint8_t)(P_DATA_V2 << P_OPCODE_SHIFT | key_id);
                pkt[1] = (uint8_t)(id >> 16);
                pkt[2] = (uint8_t)(id >> 8);
                pkt[3] = (uint8_t)id;
                assert_int_equal(run_cbpf(prog, n, pkt, sizeof(pkt)),
                                 1 + peer_id_worker(id, (int)n_workers));
            }
        }
        /* control packets, P_DATA_V1 and a P_DATA_V2 too short for its peer_id: the acceptor */
        pkt[0] = P_CONTROL_V1 << P_OPCODE_SHIFT;
        assert_int_equal(run_cbpf(prog, n, pkt, sizeof(pkt)), 0);
        pkt[0] = P_DATA_V1 << P_OPCODE_SHIFT;
        assert_int_equal(run_cbpf(prog, n, pkt, sizeof(pkt)), 0);
        pkt[0] = P_DATA_V2 << P_OPCODE_SHIFT;
        assert_int_equal(run_cbpf(prog, n, pkt, 3), 0);
        assert_int_equal(run_cbpf(prog, n, pkt, 0), 0);
    }
}

static void steering_program_needs_room(void **state)
{
    struct sock_filter prog[2];

    (void)state;
    assert_int_equal(udp_steering_program(2, prog, 2), 0);
}

/* multihome: the control message written for a source address reads back as that address
 * (IP_PKTINFO and IPV6_PKTINFO have one layout both ways); none for an unknown one. */
static void pktinfo_round_trip(void **state)
{
    union {
        struct cmsghdr align;
        uint8_t buf[UDP_PKTINFO_SPACE];
    } ctrl;
    struct udp_local v4 = {.family = AF_INET, .ifindex = 3},
                     v6 = {.family = AF_INET6, .ifindex = 4};
    struct udp_local got, none = {0};
    struct msghdr mh = {.msg_control = ctrl.buf};

    (void)state;
    v4.addr.v4.s_addr = htonl(0xc61200c8); /* 198.18.0.200 */
    v6.addr.v6.s6_addr[0] = 0x20;
    v6.addr.v6.s6_addr[1] = 0x01;
    v6.addr.v6.s6_addr[3] = 0x02;
    v6.addr.v6.s6_addr[15] = 0x07; /* 2001:2::7 */
    mh.msg_controllen = udp_pktinfo_write(&v4, ctrl.buf, sizeof(ctrl.buf));
    assert_int_equal(mh.msg_controllen, CMSG_SPACE(sizeof(struct in_pktinfo)));
    udp_pktinfo_read(&mh, &got);
    assert_int_equal(got.family, AF_INET);
    assert_int_equal(got.ifindex, 3);
    assert_int_equal(got.addr.v4.s_addr, v4.addr.v4.s_addr);
    mh.msg_controllen = udp_pktinfo_write(&v6, ctrl.buf, sizeof(ctrl.buf));
    assert_int_equal(mh.msg_controllen, CMSG_SPACE(sizeof(struct in6_pktinfo)));
    udp_pktinfo_read(&mh, &got);
    assert_int_equal(got.family, AF_INET6);
    assert_int_equal(got.ifindex, 4);
    assert_memory_equal(&got.addr.v6, &v6.addr.v6, 16);
    assert_int_equal(udp_pktinfo_write(&none, ctrl.buf, sizeof(ctrl.buf)), 0);
    assert_int_equal(udp_pktinfo_write(&v6, ctrl.buf, 8), 0); /* no room: nothing */
    mh.msg_controllen = 0;
    udp_pktinfo_read(&mh, &got);
    assert_int_equal(got.family, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(make_and_split),
        cmocka_unit_test(steering_program_agrees),
        cmocka_unit_test(steering_program_needs_room),
        cmocka_unit_test(pktinfo_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
