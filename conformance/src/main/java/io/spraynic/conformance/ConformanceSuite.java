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
 * READ. The suite opens a connection per group of checks and closes each at the end of its group (the limit check
 * of S12.9 opens as many as the target's per-source limit, and one more, then closes them).
 */
public final class ConformanceSuite
{
    /**
     * Bytes of the target's region the suite writes and reads: one 64 KiB slice per group of checks (the window
     * check of S8.2 reads two).
     */
    public static final long REGION_BYTES = 10 * 64 * 1024;

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
        return run(target, initiator, initiatorExchange, null);
    }

    /** @return the id of every check the suite has, in clause order (whichever a run reaches). */
    public static List<String> checkIds()
    {
        return List.copyOf(CheckCatalog.entries().keySet());
    }

    /** The groups of checks, by the prefix of their ids, in the order they run. */
    public static final List<String> GROUPS = List.of("handshake", "data", "malformed", "sender", "timers", "errors",
        "security", "close", "psk", "limits", "liveness", "ecn", "multipath", "resources");

    /**
     * Runs the groups of checks {@code groups} names (null: all of {@link #GROUPS}); the handshake's checks run
     * always, since every group needs a connection. Otherwise as {@link #run(Target, InetSocketAddress, Path)}.
     */
    public static ConformanceReport run(final Target target, final InetSocketAddress initiator,
        final Path initiatorExchange, final java.util.Set<String> groups) throws IOException
    {
        return run(target, initiator, initiatorExchange, groups, null, null, 0, 0);
    }

    /**
     * As {@link #run(Target, InetSocketAddress, Path, java.util.Set)}, then, when {@code interop} is given, an
     * interoperability run: the suite publishes itself as a serving NIC in {@code interopExchange}, the target (at
     * {@code interop}) connects and transfers, and the suite drops {@code loss} (0 to 0.5) of each direction, drawn
     * from {@code seed}.
     */
    public static ConformanceReport run(final Target target, final InetSocketAddress initiator,
        final Path initiatorExchange, final java.util.Set<String> groups, final InetSocketAddress interop,
        final Path interopExchange, final double loss, final long seed) throws IOException
    {
        return run(target, initiator, initiatorExchange, groups, interop, interopExchange, loss, seed, null);
    }

    /**
     * As {@link #run(Target, InetSocketAddress, Path, java.util.Set, InetSocketAddress, Path, double, long)}, and with
     * the errors group, last of the target's checks, a READ response cut short by {@code revoker} taking the target's
     * region away (S9.3.2-1; null: not tested). The target has no region after it.
     */
    public static ConformanceReport run(final Target target, final InetSocketAddress initiator,
        final Path initiatorExchange, final java.util.Set<String> groups, final InetSocketAddress interop,
        final Path interopExchange, final double loss, final long seed, final RegionRevoker revoker) throws IOException
    {
        if (!(loss >= 0 && loss <= 0.5))
        {
            throw new IllegalArgumentException("the interop loss " + loss + " is not 0 to 0.5");
        }
        if (null != groups && !GROUPS.containsAll(groups))
        {
            throw new IllegalArgumentException("unknown groups " + groups + "; the suite's groups are " + GROUPS);
        }
        final java.util.function.Predicate<String> wanted = g -> null == groups || groups.contains(g);
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
            final int slice = 64 * 1024;
            if (wanted.test("data"))
            {
                new DataChecks(target, link, results, 0).runData(handshake.request());
            }
            if (wanted.test("malformed"))
            {
                new DataChecks(target, link, results, slice).runMalformed(handshake.request());
            }
            if (wanted.test("sender"))
            {
                new PeerChecks(target, link, results, 2 * slice).runSender(handshake.request());
            }
            if (wanted.test("timers"))
            {
                // early, while the target's late margin (S6.8.1) is what few timeouts made it: READs only
                new TimerChecks(target, link, results, 2 * slice).run(handshake.request());
                new MarginChecks(target, link, results, 2 * slice).runSilentAlone(handshake.request());
                new MarginChecks(target, link, results, 2 * slice).runMarginWidened(handshake.request());
            }
            if (wanted.test("errors"))
            {
                new PeerChecks(target, link, results, 3 * slice).runErrors(handshake.request());
                new IsolationChecks(target, link, results, 3 * slice + slice / 2).run(handshake);
                new RnrChecks(target, link, results).run(handshake.request());
            }
            final AuthChecks auth = new AuthChecks(target, link, results, 6 * slice);
            if (wanted.test("security"))
            {
                new SecurityChecks(target, link, results, 4 * slice).run(handshake.request());
                auth.runMessages(handshake.request());
            }
            if (wanted.test("close"))
            {
                new PeerChecks(target, link, results, 5 * slice).runClose(handshake.request());
            }
            if (wanted.test("psk"))
            {
                auth.runPsk(handshake);
            }
            if (wanted.test("ecn"))
            {
                new TransportChecks(target, link, results, 7 * slice).runEcn(handshake.request());
            }
            if (wanted.test("multipath"))
            {
                new RouteChecks(target, link, results, 9 * slice).runRotation(handshake.request());
                new RouteChecks(target, link, results, 9 * slice).runRepath(handshake.request());
                new RouteChecks(target, link, results, 9 * slice).runRepathRtt(handshake.request());
                new RouteChecks(target, link, results, 9 * slice).runRepathLeftBehind(handshake.request());
                new TransportChecks(target, link, results, 9 * slice).runMultipath(handshake.request());
            }
            if (wanted.test("resources"))
            {
                // S10.2: the last 8 KiB of slice 8
                new ResourceChecks(target, link, results, 9L * slice - 8 * 1024).run(handshake);
            }
            if (wanted.test("limits"))
            {
                auth.runLimits(handshake);
                new FloodChecks(target, link, results).run(handshake);
            }
            if (wanted.test("liveness"))
            {
                auth.runLiveness(handshake.request());
            }
            if (wanted.test("errors"))
            {
                // last: the target has no region after it
                new RegionLossChecks(target, link, results, revoker).run(handshake.request());
            }
        }
        if (null != initiator)
        {
            try (UdpLink link = new UdpLink(target.local(), initiator))
            {
                new InitiatorChecks(target, link, results, initiatorExchange).run();
            }
        }
        if (null != interop)
        {
            try (UdpLink link = new UdpLink(target.local(), interop))
            {
                new InteropChecks(target, link, results, new InteropChecks.Interop(interop, interopExchange, loss, seed))
                    .run();
            }
        }
        return new ConformanceReport("udp:" + target.address().getAddress().getHostAddress() + ":" +
            target.address().getPort() + " from " + target.local().getAddress().getHostAddress() + ":" +
            target.local().getPort(), results);
    }
}
