/* The C receive twin: see rx_twin.h. Every check mirrors io.spraynic.datapath.wire.RoceParser, in its order and with
 * its outcome (the reasons are folded into RXTWIN_MALFORMED and RXTWIN_NOT_OURS); the ICRC is Icrc.compute's. */
#include "rx_twin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>
#include <rte_errno.h>

#include "spraynic_shim.h"

#define ETHERNET_LENGTH 14
#define VLAN_LENGTH 18
#define ETHER_TYPE_IPV4 0x0800
#define ETHER_TYPE_IPV6 0x86DD
#define ETHER_TYPE_VLAN 0x8100
#define IPV4_LENGTH 20
#define IPV6_LENGTH 40
#define UDP_LENGTH 8
#define BTH_LENGTH 12
#define ICRC_LENGTH 4
#define MASKED_LRH_LENGTH 8
#define ROCE_V2_PORT 4791
#define PROTOCOL_UDP 17
#define RC_RDMA_WRITE_ONLY 0x0A

/* The opcode table: RoceParser's OpcodeTable.ROCE_V2 for RC and UC (what the benchmarks send); other services are
 * refused as unknown here. */
#define OP_REGISTERED 0x100
#define OP_PAYLOAD 0x200
#define OP_RETH 0x400
#define OP_EXTENSIONS_MASK 0xFF
#define RETH_LENGTH 16
#define IMMDT_LENGTH 4
#define AETH_LENGTH 4

static uint16_t opcode_table[256];
/* Reflected CRC-32 (0xEDB88320, the Ethernet polynomial of java.util.zip.CRC32; NOT the Castagnoli polynomial
 * of SSE4.2's crc32 instruction), slicing by 8. */
static uint32_t crc_tables[8][256];

static void set_opcode(int opcode, int flags, int extensions)
{
    opcode_table[opcode] = (uint16_t)(OP_REGISTERED | flags | extensions);
}

__attribute__((constructor)) static void init_tables(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) {
            c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        }
        crc_tables[0][i] = c;
    }
    for (int t = 1; t < 8; t++) {
        for (int i = 0; i < 256; i++) {
            uint32_t previous = crc_tables[t - 1][i];
            crc_tables[t][i] = (previous >> 8) ^ crc_tables[0][previous & 0xFF];
        }
    }
    for (int service = 0x00; service <= 0x20; service += 0x20) {
        set_opcode(service | 0x00, OP_PAYLOAD, 0);
        set_opcode(service | 0x01, OP_PAYLOAD, 0);
        set_opcode(service | 0x02, OP_PAYLOAD, 0);
        set_opcode(service | 0x03, OP_PAYLOAD, IMMDT_LENGTH);
        set_opcode(service | 0x04, OP_PAYLOAD, 0);
        set_opcode(service | 0x05, OP_PAYLOAD, IMMDT_LENGTH);
        set_opcode(service | 0x06, OP_PAYLOAD | OP_RETH, RETH_LENGTH);
        set_opcode(service | 0x07, OP_PAYLOAD, 0);
        set_opcode(service | 0x08, OP_PAYLOAD, 0);
        set_opcode(service | 0x09, OP_PAYLOAD, IMMDT_LENGTH);
        set_opcode(service | 0x0A, OP_PAYLOAD | OP_RETH, RETH_LENGTH);
        set_opcode(service | 0x0B, OP_PAYLOAD | OP_RETH, RETH_LENGTH + IMMDT_LENGTH);
    }
    set_opcode(0x0C, OP_RETH, RETH_LENGTH);          /* RDMA READ request */
    set_opcode(0x0D, OP_PAYLOAD, AETH_LENGTH);       /* READ response first */
    set_opcode(0x0E, OP_PAYLOAD, 0);                 /* middle */
    set_opcode(0x0F, OP_PAYLOAD, AETH_LENGTH);       /* last */
    set_opcode(0x10, OP_PAYLOAD, AETH_LENGTH);       /* only */
    set_opcode(0x11, 0, AETH_LENGTH);                /* acknowledge */
}

static inline uint16_t be16(const uint8_t *at)
{
    uint16_t v;
    memcpy(&v, at, sizeof v);
    return __builtin_bswap16(v);
}

static inline uint32_t be32(const uint8_t *at)
{
    uint32_t v;
    memcpy(&v, at, sizeof v);
    return __builtin_bswap32(v);
}

static inline uint64_t be64(const uint8_t *at)
{
    uint64_t v;
    memcpy(&v, at, sizeof v);
    return __builtin_bswap64(v);
}

/* Continues the CRC register (no final complement) over bytes, slicing by 8. */
static uint32_t crc_by_table(uint32_t crc, const uint8_t *bytes, size_t length)
{
    while (length >= 8) {
        uint64_t v;
        memcpy(&v, bytes, sizeof v);
        uint32_t lo = (uint32_t)v ^ crc;
        uint32_t hi = (uint32_t)(v >> 32);
        crc = crc_tables[7][lo & 0xFF] ^ crc_tables[6][(lo >> 8) & 0xFF] ^ crc_tables[5][(lo >> 16) & 0xFF] ^
              crc_tables[4][lo >> 24] ^ crc_tables[3][hi & 0xFF] ^ crc_tables[2][(hi >> 8) & 0xFF] ^
              crc_tables[1][(hi >> 16) & 0xFF] ^ crc_tables[0][hi >> 24];
        bytes += 8;
        length -= 8;
    }
    while (length-- > 0) {
        crc = (crc >> 8) ^ crc_tables[0][(crc ^ *bytes++) & 0xFF];
    }
    return crc;
}

/* The bit-reflected folding constants of the Ethernet polynomial: (x^(d+32) mod P)' << 1 in the low quadword,
 * (x^(d-32) mod P)' << 1 in the high, to fold a 128-bit lane d bits ahead (as in Intel's "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ", Linux's crc32-pclmul and Chromium's zlib); K5 and the Barrett pair reduce
 * the last 64 bits to 32. The d = 2048 pair was derived the same way and is checked by ReceiveTwinTest. */
#define K_512_LO 0x0154442bd4LL
#define K_512_HI 0x01c6e41596LL
#define K_128_LO 0x01751997d0LL
#define K_128_HI 0x00ccaa009eLL
#define K_2048_LO 0x011542778aLL
#define K_2048_HI 0x01322d1430LL
#define K5 0x0163cd6124LL
#define BARRETT_P 0x01db710641LL
#define BARRETT_U 0x01f7011641LL

/* Four consecutive 128-bit lanes x1..x4 (the register already folded in) and `length` more bytes, a multiple of 16:
 * folds 64 bytes a step, then into one lane, then 16 bytes a step, then reduces to the 32-bit register. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t fold_lanes(__m128i x1, __m128i x2, __m128i x3, __m128i x4,
                                                                     const uint8_t *bytes, size_t length)
{
    const __m128i k512 = _mm_set_epi64x(K_512_HI, K_512_LO);
    const __m128i k128 = _mm_set_epi64x(K_128_HI, K_128_LO);
    while (length >= 64) {
        __m128i x5 = _mm_clmulepi64_si128(x1, k512, 0x00);
        __m128i x6 = _mm_clmulepi64_si128(x2, k512, 0x00);
        __m128i x7 = _mm_clmulepi64_si128(x3, k512, 0x00);
        __m128i x8 = _mm_clmulepi64_si128(x4, k512, 0x00);
        x1 = _mm_clmulepi64_si128(x1, k512, 0x11);
        x2 = _mm_clmulepi64_si128(x2, k512, 0x11);
        x3 = _mm_clmulepi64_si128(x3, k512, 0x11);
        x4 = _mm_clmulepi64_si128(x4, k512, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), _mm_loadu_si128((const __m128i *)(bytes + 0x00)));
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), _mm_loadu_si128((const __m128i *)(bytes + 0x10)));
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), _mm_loadu_si128((const __m128i *)(bytes + 0x20)));
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), _mm_loadu_si128((const __m128i *)(bytes + 0x30)));
        bytes += 64;
        length -= 64;
    }
    __m128i x5 = _mm_clmulepi64_si128(x1, k128, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k128, 0x11), x2), x5);
    x5 = _mm_clmulepi64_si128(x1, k128, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k128, 0x11), x3), x5);
    x5 = _mm_clmulepi64_si128(x1, k128, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k128, 0x11), x4), x5);
    while (length >= 16) {
        x5 = _mm_clmulepi64_si128(x1, k128, 0x00);
        x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k128, 0x11),
                                         _mm_loadu_si128((const __m128i *)bytes)), x5);
        bytes += 16;
        length -= 16;
    }
    /* 128 bits to 64, then to 32 by Barrett reduction */
    const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);
    const __m128i k5 = _mm_set_epi64x(0, K5);
    const __m128i barrett = _mm_set_epi64x(BARRETT_U, BARRETT_P);
    x2 = _mm_clmulepi64_si128(x1, k128, 0x10);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00), x2);
    x2 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), barrett, 0x10);
    x2 = _mm_clmulepi64_si128(_mm_and_si128(x2, mask32), barrett, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}

/* Continues the CRC register over `length` bytes, length >= 64 and a multiple of 16, with 128-bit PCLMULQDQ. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc_by_pclmul(uint32_t crc, const uint8_t *bytes,
                                                                        size_t length)
{
    __m128i x1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)bytes), _mm_cvtsi32_si128((int)crc));
    return fold_lanes(x1, _mm_loadu_si128((const __m128i *)(bytes + 0x10)),
                      _mm_loadu_si128((const __m128i *)(bytes + 0x20)),
                      _mm_loadu_si128((const __m128i *)(bytes + 0x30)), bytes + 64, length - 64);
}

static inline __attribute__((target("avx512f,vpclmulqdq"))) __m512i fold_zmm(__m512i lanes, __m512i k, __m512i next)
{
    /* 0x96: a ^ b ^ c */
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(lanes, k, 0x00), _mm512_clmulepi64_epi128(lanes, k, 0x11),
                                     next, 0x96);
}

/* As crc_by_pclmul for length >= 256: sixteen 128-bit lanes in four 512-bit registers, 256 bytes a step (VPCLMULQDQ,
 * AVX-512, as the JDK's CRC32 intrinsic folds on this CPU), then four lanes onwards as above. */
__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1"))) static uint32_t crc_by_vpclmul(uint32_t crc,
                                                                                            const uint8_t *bytes,
                                                                                            size_t length)
{
    const __m512i k2048 = _mm512_broadcast_i32x4(_mm_set_epi64x(K_2048_HI, K_2048_LO));
    const __m512i k512 = _mm512_broadcast_i32x4(_mm_set_epi64x(K_512_HI, K_512_LO));
    __m512i z1 = _mm512_xor_si512(_mm512_loadu_si512(bytes), _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)crc)));
    __m512i z2 = _mm512_loadu_si512(bytes + 64);
    __m512i z3 = _mm512_loadu_si512(bytes + 128);
    __m512i z4 = _mm512_loadu_si512(bytes + 192);
    bytes += 256;
    length -= 256;
    while (length >= 256) {
        z1 = fold_zmm(z1, k2048, _mm512_loadu_si512(bytes));
        z2 = fold_zmm(z2, k2048, _mm512_loadu_si512(bytes + 64));
        z3 = fold_zmm(z3, k2048, _mm512_loadu_si512(bytes + 128));
        z4 = fold_zmm(z4, k2048, _mm512_loadu_si512(bytes + 192));
        bytes += 256;
        length -= 256;
    }
    z2 = fold_zmm(z1, k512, z2);
    z3 = fold_zmm(z2, k512, z3);
    z4 = fold_zmm(z3, k512, z4);
    return fold_lanes(_mm512_extracti32x4_epi32(z4, 0), _mm512_extracti32x4_epi32(z4, 1),
                      _mm512_extracti32x4_epi32(z4, 2), _mm512_extracti32x4_epi32(z4, 3), bytes, length);
}

static inline uint32_t crc_update(int32_t folding, uint32_t crc, const uint8_t *bytes, size_t length)
{
    size_t folded = length & ~(size_t)15;
    if (folding >= RXTWIN_CRC_VPCLMUL && length >= 256) {
        crc = crc_by_vpclmul(crc, bytes, folded);
    } else if (folding >= RXTWIN_CRC_PCLMUL && length >= 64) {
        crc = crc_by_pclmul(crc, bytes, folded);
    } else {
        folded = 0;
    }
    return crc_by_table(crc, bytes + folded, length - folded);
}

/* Up to this many bytes after the BTH are copied beside the masked headers, so that a small packet's CRC is one
 * fold over one buffer (the fold wants 64 bytes and more; the headers alone are 56 or 76) rather than a table CRC of
 * the headers and a fold of the rest. */
#define INLINE_REST_LENGTH 512

/* Icrc.compute: the masked LRH, IP, UDP and BTH from a copy (with the rest too, if short), the rest in place. */
static uint32_t icrc(int32_t folding, const uint8_t *ip, int ip_version, int ip_header_length, const uint8_t *icrc_at)
{
    uint8_t scratch[MASKED_LRH_LENGTH + 60 + UDP_LENGTH + BTH_LENGTH + INLINE_REST_LENGTH];
    size_t headers = (size_t)ip_header_length + UDP_LENGTH + BTH_LENGTH;
    const uint8_t *rest = ip + headers;
    size_t rest_length = (size_t)(icrc_at - rest);
    size_t copied = rest_length <= INLINE_REST_LENGTH ? headers + rest_length : headers;
    memset(scratch, 0xFF, MASKED_LRH_LENGTH);
    memcpy(scratch + MASKED_LRH_LENGTH, ip, copied);
    uint8_t *masked = scratch + MASKED_LRH_LENGTH;
    if (ip_version == 4) {
        masked[1] = 0xFF;              /* DSCP, ECN */
        masked[8] = 0xFF;              /* TTL */
        masked[10] = masked[11] = 0xFF; /* header checksum */
    } else {
        masked[0] |= 0x0F;             /* traffic class and flow label */
        masked[1] = masked[2] = masked[3] = 0xFF;
        masked[7] = 0xFF;              /* hop limit */
    }
    uint8_t *udp = masked + ip_header_length;
    udp[6] = udp[7] = 0xFF;            /* UDP checksum */
    udp[UDP_LENGTH + 4] = 0xFF;        /* BTH resv8a */
    uint32_t crc = crc_update(folding, 0xFFFFFFFFu, scratch, MASKED_LRH_LENGTH + copied);
    return copied == headers ? ~crc_update(folding, crc, rest, rest_length) : ~crc;
}

uint32_t spraynic_rxtwin_icrc(const struct spraynic_rxtwin *twin, const uint8_t *ip, const uint8_t *icrc_at)
{
    int version = ip[0] >> 4;
    return icrc(twin->crc, ip, version, version == 4 ? (ip[0] & 0xF) << 2 : IPV6_LENGTH, icrc_at);
}

static inline int32_t count(struct spraynic_rxtwin *twin, int32_t outcome)
{
    twin->counters[outcome]++;
    return outcome;
}

/* After the BTH: the ICRC outranks every other transport refusal, as in RoceParser.parseBth. */
static int32_t transport(struct spraynic_rxtwin *twin, const uint8_t *ip, int ip_version, int ip_header_length,
                         const uint8_t *bth, const uint8_t *icrc_at)
{
    uint32_t received;
    memcpy(&received, icrc_at, sizeof received); /* little-endian on the wire, as on this CPU */
    uint32_t computed = icrc(twin->crc, ip, ip_version, ip_header_length, icrc_at);
    int opcode = bth[0];
    int pad = (bth[1] >> 4) & 0x3;
    int tver = bth[1] & 0xF;
    int32_t outcome = RXTWIN_ACCEPTED;
    uint16_t entry = opcode_table[opcode];
    const uint8_t *extensions = bth + BTH_LENGTH;
    const uint8_t *payload = extensions + (entry & OP_EXTENSIONS_MASK);
    if (tver != 0 || (entry & OP_REGISTERED) == 0 || payload > icrc_at) {
        outcome = RXTWIN_MALFORMED;
    } else {
        long padded = icrc_at - payload;
        if ((entry & OP_PAYLOAD) == 0 ? pad != 0 || padded != 0 : pad > padded || (padded & 3) != 0) {
            outcome = RXTWIN_MALFORMED;
        } else if (opcode == RC_RDMA_WRITE_ONLY) {
            uint64_t address = be64(extensions);
            uint32_t rkey = be32(extensions + 8);
            uint64_t length = (uint64_t)(padded - pad);
            outcome = RXTWIN_PLACED;
            if (rkey != twin->rkey || address < twin->region_base || address - twin->region_base > twin->region_length ||
                length > twin->region_length - (address - twin->region_base)) {
                outcome = RXTWIN_OUT_OF_REGION;
            } else if (computed == received) {
                memcpy(twin->region + (address - twin->region_base), payload, length);
            }
        }
    }
    return count(twin, computed != received ? RXTWIN_BAD_ICRC : outcome);
}

static int32_t udp_and_transport(struct spraynic_rxtwin *twin, const uint8_t *ip, int ip_version,
                                 int ip_header_length, long l4_length)
{
    const uint8_t *udp = ip + ip_header_length;
    if (l4_length < UDP_LENGTH) {
        return count(twin, RXTWIN_MALFORMED);
    }
    int udp_length = be16(udp + 4);
    if (be16(udp + 2) != ROCE_V2_PORT) {
        return count(twin, RXTWIN_NOT_OURS);
    }
    if (udp_length != l4_length || udp_length - UDP_LENGTH < BTH_LENGTH + ICRC_LENGTH) {
        return count(twin, RXTWIN_MALFORMED);
    }
    return transport(twin, ip, ip_version, ip_header_length, udp + UDP_LENGTH, udp + udp_length - ICRC_LENGTH);
}

static int32_t ipv4(struct spraynic_rxtwin *twin, const uint8_t *ip, long available)
{
    if (available < IPV4_LENGTH || (ip[0] >> 4) != 4) {
        return count(twin, RXTWIN_MALFORMED);
    }
    int header_length = (ip[0] & 0xF) << 2;
    if (header_length < IPV4_LENGTH || available < header_length) {
        return count(twin, RXTWIN_MALFORMED);
    }
    /* the one's-complement sum of the header in 32-bit words: 0xFFFF when the checksum holds, in either byte order */
    uint64_t sum = 0;
    for (int word = 0; word < header_length; word += 4) {
        uint32_t v;
        memcpy(&v, ip + word, sizeof v);
        sum += v;
    }
    sum = (sum & 0xFFFFFFFFu) + (sum >> 32);
    sum = (sum & 0xFFFFFFFFu) + (sum >> 32);
    sum = (sum & 0xFFFF) + (sum >> 16);
    sum = (sum & 0xFFFF) + (sum >> 16);
    int total_length = be16(ip + 2);
    if (sum != 0xFFFF || total_length < header_length || total_length > available) {
        return count(twin, RXTWIN_MALFORMED);
    }
    if ((be16(ip + 6) & 0x3FFF) != 0 || ip[9] != PROTOCOL_UDP) {
        return count(twin, RXTWIN_NOT_OURS);
    }
    return udp_and_transport(twin, ip, 4, header_length, total_length - header_length);
}

static int32_t ipv6(struct spraynic_rxtwin *twin, const uint8_t *ip, long available)
{
    if (available < IPV6_LENGTH || (ip[0] >> 4) != 6) {
        return count(twin, RXTWIN_MALFORMED);
    }
    int payload_length = be16(ip + 4);
    if (payload_length > available - IPV6_LENGTH) {
        return count(twin, RXTWIN_MALFORMED);
    }
    if (ip[6] != PROTOCOL_UDP) {
        return count(twin, RXTWIN_NOT_OURS);
    }
    return udp_and_transport(twin, ip, 6, IPV6_LENGTH, payload_length);
}

int32_t spraynic_rxtwin_frame(struct spraynic_rxtwin *twin, const uint8_t *frame, uint32_t length)
{
    if (length < ETHERNET_LENGTH) {
        return count(twin, RXTWIN_MALFORMED);
    }
    int ether_type = be16(frame + 12);
    long l3 = ETHERNET_LENGTH;
    if (ether_type == ETHER_TYPE_VLAN) {
        if (length < VLAN_LENGTH) {
            return count(twin, RXTWIN_MALFORMED);
        }
        ether_type = be16(frame + 16);
        l3 = VLAN_LENGTH;
    }
    if (ether_type == ETHER_TYPE_IPV4) {
        return ipv4(twin, frame + l3, (long)length - l3);
    }
    if (ether_type == ETHER_TYPE_IPV6) {
        return ipv6(twin, frame + l3, (long)length - l3);
    }
    return count(twin, RXTWIN_NOT_OURS);
}

struct spraynic_rxtwin *spraynic_rxtwin_create(uint16_t port, uint32_t burst_size, uint8_t *region,
                                               uint64_t region_base, uint64_t region_length, uint32_t rkey,
                                               int32_t crc_folding)
{
    if (burst_size < 1 || burst_size > SPRAYNIC_RXTWIN_MAX_BURST || (region == NULL && region_length != 0) ||
        region_base + region_length < region_base) {
        rte_errno = EINVAL;
        return NULL;
    }
    struct spraynic_rxtwin *twin = calloc(1, sizeof *twin);
    if (twin == NULL) {
        rte_errno = ENOMEM;
        return NULL;
    }
    twin->port = port;
    twin->burst_size = burst_size;
    twin->region = region;
    twin->region_base = region_base;
    twin->region_length = region_length;
    twin->rkey = rkey;
    __builtin_cpu_init();
    int32_t best = !__builtin_cpu_supports("pclmul") || !__builtin_cpu_supports("sse4.1") ? RXTWIN_CRC_TABLES :
                   __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq") ? RXTWIN_CRC_VPCLMUL :
                   RXTWIN_CRC_PCLMUL;
    twin->crc = crc_folding < best ? (crc_folding < RXTWIN_CRC_TABLES ? RXTWIN_CRC_TABLES : crc_folding) : best;
    return twin;
}

uint64_t spraynic_rxtwin_bursts(struct spraynic_rxtwin *twin, uint64_t bursts)
{
    struct rte_mbuf **burst = twin->burst;
    uint64_t received = 0;
    for (uint64_t i = 0; i < bursts; i++) {
        uint32_t result = spraynic_tx_rx_burst(twin->port, 0, burst, (uint16_t)twin->held,
                                               (uint16_t)twin->burst_size);
        unsigned unsent = twin->held - (result & 0xFFFF); /* what the port did not take stays in front */
        unsigned held = result >> 16;
        twin->held = held;
        for (unsigned f = unsent; f < held; f++) {
            struct rte_mbuf *mbuf = burst[f];
            spraynic_rxtwin_frame(twin, rte_pktmbuf_mtod(mbuf, const uint8_t *), mbuf->data_len);
        }
        received += held - unsent;
    }
    return received;
}

void spraynic_rxtwin_flush(struct spraynic_rxtwin *twin)
{
    if (twin->held > 0) {
        unsigned sent = spraynic_tx_burst(twin->port, 0, twin->burst, (uint16_t)twin->held);
        if (sent < twin->held) {
            spraynic_mbuf_free_bulk(twin->burst + sent, twin->held - sent);
        }
        twin->held = 0;
    }
}

const uint64_t *spraynic_rxtwin_counters(const struct spraynic_rxtwin *twin)
{
    return twin->counters;
}

int32_t spraynic_rxtwin_crc_folding(const struct spraynic_rxtwin *twin)
{
    return twin->crc;
}

void spraynic_rxtwin_free(struct spraynic_rxtwin *twin)
{
    if (twin == NULL) {
        return;
    }
    spraynic_rxtwin_flush(twin);
    free(twin);
}
