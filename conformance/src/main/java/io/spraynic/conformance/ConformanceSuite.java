package io.spraynic.conformance;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The wire-level compliance suite of docs/PROTOCOL.md: a scripted spray peer that judges an implementation only by
 * what it puts on the wire and what lands in the memory it exposes. Each check cites the clause identifier it
 * tests and ends PASS, FAIL or NOT_TESTED with the reason; {@link ConformanceReport#mustFailed()} is the verdict.
 * <p>
 * The target must accept spray connections on kernel UDP sockets (S2.1 over UDP port 4791: e.g. {@code spraynic nic
 * --config udp --mode spray --expose 1m}) and expose a region of at least {@link #REGION_BYTES} for RDMA WRITE and
 * READ. The suite opens a handful of connections (fewer than a responder's default per-source limit, S12.9), one
 * per group of checks, and closes each at the end of its group.
 */
public final class ConformanceSuite
{
    /** Bytes of the target's region the suite writes and reads: one 64 KiB slice per group of checks. */
    public static final long REGION_BYTES = 6 * 64 * 1024;

    private ConformanceSuite()
    {
    }

    /**
     * Runs every check against {@code target}.
     *
     * @return the report; {@link ConformanceReport#mustFailed()} says whether the target complies.
     */
    public static ConformanceReport run(final Target target) throws IOException
    {
        return run(target, null, null);
    }

    /**
     * Runs every check against {@code target}, then, when {@code initiator} is given, the checks of the target as
     * an initiator: the suite publishes itself as a serving NIC in {@code initiatorExchange} and waits for the
     * target (at {@code initiator}) to connect to it.
     */
    public static ConformanceReport run(final Target target, final InetSocketAddress initiator,
        final Path initiatorExchange) throws IOException
    {
        if (target.regionLength() < REGION_BYTES)
        {
            throw new IllegalArgumentException("the target exposes " + target.regionLength() + " B; the suite needs " +
                REGION_BYTES + " B (spraynic nic --expose 1m)");
        }
        final List<CheckResult> results = new ArrayList<>();
        try (UdpLink link = new UdpLink(target.local(), target.address()))
        {
            final HandshakeChecks handshake = new HandshakeChecks(target, link, results);
            handshake.run();
            final DataChecks data = new DataChecks(target, link, results, 0);
            data.runData(handshake.request());
            new DataChecks(target, link, results, 64 * 1024).runMalformed(handshake.request());
            final PeerChecks sender = new PeerChecks(target, link, results, 2 * 64 * 1024);
            sender.runSender(handshake.request());
            new PeerChecks(target, link, results, 3 * 64 * 1024).runErrors(handshake.request());
            new SecurityChecks(target, link, results, 4 * 64 * 1024).run(handshake.request());
            new PeerChecks(target, link, results, 5 * 64 * 1024).runClose(handshake.request());
        }
        if (null != initiator)
        {
            try (UdpLink link = new UdpLink(target.local(), initiator))
            {
                new InitiatorChecks(target, link, results, initiatorExchange).run();
            }
        }
        return new ConformanceReport("udp:" + target.address().getAddress().getHostAddress() + ":" +
            target.address().getPort() + " from " + target.local().getAddress().getHostAddress() + ":" +
            target.local().getPort(), results);
    }
}
