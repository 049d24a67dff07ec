package io.spraynic.pmd;

/**
 * The smallest valid port section of a NIC config: two {@code net_ring} pairs, each the other's peer. Tests of one
 * top-level key or table append or prepend it, so each tests its key against a config that is otherwise valid.
 */
final class TwoRingPairs
{
    static final String PORTS = """
        [[port]]
        name = "ring0"
        kind = "ring_pair"
        peer = "ring1"
        [[port]]
        name = "ring1"
        kind = "ring_pair"
        peer = "ring0"
        """;

    private TwoRingPairs()
    {
    }
}
