package io.spraynic.datapath.neighbour;

import io.spraynic.datapath.transport.TransportCounters;

/**
 * Slots of a {@link NeighbourAgent}'s {@link TransportCounters}: what it sent, received, answered and refused,
 * each drop with its reason; the ARP and neighbour-discovery (IPv6) messages apart, the rest shared by both
 * families (an ICMPv6 checksum or code that is wrong counts as {@code dropped_bad_icmp}). The NIC mirrors them into its counters file as {@code worker W: plane P neighbour
 * LABEL}, so {@code spraynic stat} and the Prometheus metrics show them.
 */
public final class NeighbourCounters
{
    public static final int ARP_REQUESTS_SENT = 0;
    public static final int ARP_REQUESTS_RECEIVED = 1;
    public static final int ARP_REPLIES_SENT = 2;
    public static final int ARP_REPLIES_RECEIVED = 3;
    public static final int GRATUITOUS_SENT = 4;
    public static final int GRATUITOUS_RECEIVED = 5;
    public static final int CACHE_HITS = 6;
    public static final int CACHE_MISSES = 7;
    public static final int RESOLVED = 8;
    public static final int MAC_CHANGES = 9;
    public static final int EVICTIONS = 10;
    public static final int FAILURES = 11;
    public static final int CACHE_FULL = 12;
    public static final int ECHO_REQUESTS_RECEIVED = 13;
    public static final int ECHO_ANSWERED = 14;
    public static final int RATE_LIMITED = 15;
    public static final int TX_FULL = 16;
    public static final int DROPPED_TRUNCATED = 17;
    public static final int DROPPED_BAD_FORMAT = 18;
    public static final int DROPPED_BAD_OPERATION = 19;
    public static final int DROPPED_BAD_SENDER = 20;
    public static final int DROPPED_NOT_FOR_US = 21;
    public static final int DROPPED_UNSOLICITED_REPLY = 22;
    public static final int DROPPED_ADDRESS_CONFLICT = 23;
    public static final int DROPPED_BAD_ICMP = 24;
    public static final int DROPPED_TOO_LARGE = 25;
    public static final int ICMP_OTHER = 26;
    public static final int SOLICITATIONS_SENT = 27;
    public static final int SOLICITATIONS_RECEIVED = 28;
    public static final int ADVERTISEMENTS_SENT = 29;
    public static final int ADVERTISEMENTS_RECEIVED = 30;
    public static final int UNSOLICITED_ADVERTISEMENTS_SENT = 31;
    public static final int UNSOLICITED_ADVERTISEMENTS_RECEIVED = 32;
    public static final int DROPPED_BAD_HOP_LIMIT = 33;
    public static final int DROPPED_BAD_OPTIONS = 34;
    public static final int DROPPED_NO_LINK_LAYER_ADDRESS = 35;
    /** Echo replies withheld by their own rate (apart from {@link #RATE_LIMITED}, ARP replies and advertisements). */
    public static final int ECHO_RATE_LIMITED = 36;
    /** MAC changes of known entries refused over {@link NeighbourAgent#MAC_CHANGES_PER_SECOND}. */
    public static final int MAC_CHANGES_RATE_LIMITED = 37;
    /** Failed entries asked again after their hold-down, because connections still send to them. */
    public static final int FOLLOWED_ASKED_AGAIN = 38;
    /** Next hops a connection sends to that were not followed: the table full, or half of it followed already. */
    public static final int FOLLOWS_REFUSED = 39;

    private static final String[] LABELS = {
        "arp_requests_sent", "arp_requests_received", "arp_replies_sent", "arp_replies_received",
        "gratuitous_arp_sent", "gratuitous_arp_received", "cache_hits", "cache_misses", "resolved", "mac_changes",
        "evictions", "resolution_failures", "cache_full", "echo_requests_received", "echo_answered",
        "replies_rate_limited", "tx_full", "dropped_truncated", "dropped_bad_format", "dropped_bad_operation",
        "dropped_bad_sender", "dropped_not_for_us", "dropped_unsolicited_reply", "dropped_address_conflict",
        "dropped_bad_icmp", "dropped_too_large", "icmp_other_types", "neighbour_solicitations_sent",
        "neighbour_solicitations_received", "neighbour_advertisements_sent", "neighbour_advertisements_received",
        "unsolicited_advertisements_sent", "unsolicited_advertisements_received", "dropped_bad_hop_limit",
        "dropped_bad_options", "dropped_no_link_layer_address", "echo_replies_rate_limited",
        "mac_changes_rate_limited", "followed_asked_again", "follows_refused"};

    private NeighbourCounters()
    {
    }

    /** @return fresh counters with these slots. */
    public static TransportCounters create()
    {
        return new TransportCounters("NeighbourCounters", LABELS.clone());
    }
}
