package io.spraynic.datapath.wire;

/**
 * Why a frame is not a RoCEv2 packet. All of these share the one {@link ParseCounters#NOT_OURS} counter.
 */
public enum NotOursReason
{
    /** EtherType is neither IPv4 nor IPv6 (ARP, LLDP, RoCEv1, a second VLAN tag...). */
    NON_IP,
    /** IPv4 protocol or IPv6 next header is not UDP (IPv6 extension headers included). */
    NON_UDP,
    /** UDP destination port is not 4791. */
    OTHER_UDP_PORT,
    /** An IPv4 fragment (more-fragments set or non-zero offset): RoCEv2 is never fragmented. */
    IP_FRAGMENT
}
