package io.spraynic.datapath.wire;

/**
 * Why a frame is malformed, in the order the parser checks. Each has its own counter in
 * {@link ParseCounters}.
 */
public enum MalformedReason
{
    /** Frame shorter than the Ethernet header (14 bytes, 18 with a VLAN tag). */
    TRUNCATED_ETHERNET,
    /** Frame ends inside the IP header, or before the IP packet's total (or payload) length. */
    TRUNCATED_IP,
    /** IP version nibble does not match the EtherType. */
    BAD_IP_VERSION,
    /** IPv4 IHL below 5 words. */
    BAD_IPV4_HEADER_LENGTH,
    /** IPv4 header checksum wrong. */
    BAD_IPV4_CHECKSUM,
    /** IPv4 total length shorter than its header. */
    BAD_IP_LENGTH,
    /** IP payload shorter than a UDP header. */
    TRUNCATED_UDP,
    /** UDP length differs from the IP payload length. */
    BAD_UDP_LENGTH,
    /** UDP payload shorter than BTH plus ICRC (16 bytes). */
    TRUNCATED_BTH,
    /** BTH transport header version is not 0. */
    BAD_TVER,
    /** Opcode not in the parser's {@link OpcodeTable}. */
    UNKNOWN_OPCODE,
    /** Extension headers the opcode requires run into the ICRC. */
    TRUNCATED_EXTENSION_HEADER,
    /** Pad count larger than the payload, or non-zero on an opcode without payload. */
    BAD_PAD_COUNT,
    /** Payload on an opcode that carries none, or payload plus pad not a multiple of 4 bytes. */
    BAD_PAYLOAD_LENGTH,
    /** Invariant CRC does not match. */
    BAD_ICRC;

    private static final MalformedReason[] VALUES = values();

    /**
     * @param ordinal an ordinal.
     * @return the reason with that ordinal, without allocating (unlike {@code values()}).
     */
    public static MalformedReason of(final int ordinal)
    {
        return VALUES[ordinal];
    }

    /** @return number of reasons. */
    public static int count()
    {
        return VALUES.length;
    }
}
