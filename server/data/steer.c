/* server/data/steer.c: eBPF steering of TUN packets to the owning worker's queue. */
#include "server/data/steer.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "server/data/tun.h"

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
    struct bpf_insn i;

    memset(&i, 0, sizeof(i));
    i.code = code;
    i.dst_reg = dst & 0xF;
    i.src_reg = src & 0xF;
    i.off = off;
    i.imm = imm;
    return i;
}

/* One lookup block: r0 = map[key at r10 - 4]; return the value, or queue 0 when absent. */
static size_t lookup_block(struct bpf_insn *p, size_t n, int map_fd)
{
    p[n++] = insn(BPF_STX | BPF_W | BPF_MEM, BPF_REG_10, BPF_REG_0, -4, 0);
    p[n++] = insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd);
    p[n++] = insn(0, 0, 0, 0, 0); /* second half of the 64-bit immediate */
    p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
    p[n++] = insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4);
    p[n++] = insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
    p[n++] = insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0);
    p[n++] = insn(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_0, BPF_REG_0, 0, 0);
    p[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
    p[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    return n;
}

#define LOOKUP_BLOCK_LEN 11

/* The program, in eBPF instructions (there is no BPF compiler in the build):
 *   r6 = skb; r0 = *(u8 *)data >> 4                -- IP version, LD_ABS (0 if too short)
 *   if r0 == 6: key = ntohl(*(u32 *)(data + 36))   -- low 32 bits of the IPv6 destination
 *   else:       key = ntohl(*(u32 *)(data + 16))   -- IPv4 destination
 *   return map6/map4[key] or 0                      -- the queue; the kernel takes it mod n */
static size_t build_program(struct bpf_insn *p, int map_fd, int map6_fd)
{
    size_t n = 0;

    p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0);
    p[n++] = insn(BPF_LD | BPF_B | BPF_ABS, 0, 0, 0, 0);
    p[n++] = insn(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 4);
    /* to the IPv6 part: skip the IPv4 load and its lookup block */
    p[n++] = insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 1 + LOOKUP_BLOCK_LEN, 6);
    p[n++] = insn(BPF_LD | BPF_W | BPF_ABS, 0, 0, 0, 16);
    n = lookup_block(p, n, map_fd);
    p[n++] = insn(BPF_LD | BPF_W | BPF_ABS, 0, 0, 0, 36);
    n = lookup_block(p, n, map6_fd);
    return n;
}

int tun_steer_open(struct tun_steer *s, const struct tun_dev *t, uint32_t max_entries)
{
    struct bpf_insn prog[8 + 2 * LOOKUP_BLOCK_LEN];
    size_t n;
    int err;

    s->map_fd = s->map6_fd = s->prog_fd = -1;
    s->map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "ovpnd_steer", sizeof(uint32_t), sizeof(uint32_t),
                               max_entries ? max_entries : 1, NULL);
    if (s->map_fd < 0) {
        err = -errno;
        goto fail;
    }
    s->map6_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "ovpnd_steer6", sizeof(uint32_t),
                                sizeof(uint32_t), max_entries ? max_entries : 1, NULL);
    if (s->map6_fd < 0) {
        err = -errno;
        goto fail;
    }
    n = build_program(prog, s->map_fd, s->map6_fd);
    s->prog_fd =
        bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "ovpnd_tun", "Dual MIT/GPL", prog, n, NULL);
    if (s->prog_fd < 0) {
        err = -errno;
        goto fail;
    }
    err = tun_set_steering_ebpf(t, s->prog_fd);
    if (err) {
        goto fail;
    }
    return 0;

fail:
    tun_steer_close(s);
    return err ? err : -EINVAL;
}

int tun_steer_set(const struct tun_steer *s, uint32_t addr, uint32_t queue)
{
    if (s->map_fd < 0) {
        return 0;
    }
    return bpf_map_update_elem(s->map_fd, &addr, &queue, BPF_ANY) < 0 ? -errno : 0;
}

void tun_steer_del(const struct tun_steer *s, uint32_t addr)
{
    if (s->map_fd >= 0) {
        (void)bpf_map_delete_elem(s->map_fd, &addr);
    }
}

/* The IPv6 map's key: the address's last 32 bits, as the program loads them (host order). */
static uint32_t key6(const uint8_t addr[16])
{
    return (uint32_t)addr[12] << 24 | (uint32_t)addr[13] << 16 | (uint32_t)addr[14] << 8 |
           (uint32_t)addr[15];
}

int tun_steer_set6(const struct tun_steer *s, const uint8_t addr[16], uint32_t queue)
{
    uint32_t key = key6(addr);

    if (s->map6_fd < 0) {
        return 0;
    }
    return bpf_map_update_elem(s->map6_fd, &key, &queue, BPF_ANY) < 0 ? -errno : 0;
}

void tun_steer_del6(const struct tun_steer *s, const uint8_t addr[16])
{
    uint32_t key = key6(addr);

    if (s->map6_fd >= 0) {
        (void)bpf_map_delete_elem(s->map6_fd, &key);
    }
}

void tun_steer_close(struct tun_steer *s)
{
    if (s->prog_fd >= 0) {
        close(s->prog_fd);
    }
    if (s->map_fd >= 0) {
        close(s->map_fd);
    }
    s->map_fd = s->map6_fd = s->prog_fd = -1;
}
