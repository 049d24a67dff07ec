package io.spraynic.cli;

import io.spraynic.conformance.ConformanceReport;
import io.spraynic.conformance.ConformanceSuite;
import io.spraynic.conformance.RegionRevoker;
import io.spraynic.conformance.Target;
import io.spraynic.datapath.nic.PreSharedKeyFile;
import io.spraynic.datapath.telemetry.OutputFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code spraynic conformance --target udp:HOST[:PORT] ...}: runs the wire-level compliance suite (module
 * {@code conformance}) against a spray implementation on kernel UDP sockets, playing its peer; exit status 1 when
 * a MUST clause failed.
 */
@Command(name = "conformance", mixinStandardHelpOptions = true,
    description = {"Judge a spray implementation by its frames alone: the suite plays its peer over UDP (handshake, " +
        "versions, malformed packets, ACK/SACK, retransmission, NACKs, CLOSE, PSK, ECN and congestion window, " +
        "multipath, limits, liveness; with --interop a transfer under loss) and reports PASS/FAIL/NOT-TESTED per " +
        "PROTOCOL.md clause. The target accepts spray connections and exposes memory, e.g.",
        "spraynic nic --config udp -p ip=127.0.0.1 --ip 127.0.0.1 --mode spray --expose 1m --exchange DIR.",
        "Exit status 1 when a MUST clause failed."})
final class ConformanceCommand implements Callable<Integer>
{
    @Option(names = "--target", required = true, paramLabel = "udp:HOST[:PORT]",
        description = {"The implementation under test: its IPv4 or IPv6 address and UDP port (default 4791);",
            "an IPv6 address with a port in brackets: udp:[fd00::1]:4791 (--local then of IPv6 too)."})
    String target;

    @Option(names = "--local", defaultValue = "127.0.0.2:4791", paramLabel = "HOST[:PORT]", description = {
        "Where the suite listens: the address the target sends its answers to, on the target's peer port " +
        "(default ${DEFAULT-VALUE}; another loopback address than the target's works without root)."})
    String local;

    @Option(names = "--exchange", paramLabel = "DIR",
        description = "Read the target's exposed region from DIR/nic.addr (spraynic nic --exchange DIR).")
    Path exchange;

    @Option(names = "--region", paramLabel = "ADDR:RKEY:LENGTH",
        description = "The target's exposed region, when it publishes no exchange directory.")
    String region;

    @Option(names = "--planes", defaultValue = "1", paramLabel = "N",
        description = "The target's planes, when no exchange directory says (default ${DEFAULT-VALUE}).")
    int planes;

    @Option(names = "--initiator", paramLabel = "udp:HOST[:PORT]", description = {
        "Also check the target as an initiator, from this address: the suite publishes itself as a serving NIC in " +
        "--initiator-exchange and waits (60 s) for a CONNECT, e.g. from spraynic transfer --peer-kind nic --role " +
        "client --exchange DIR, which it answers with a RETRY and then a REJECT."})
    String initiator;

    @Option(names = "--initiator-exchange", paramLabel = "DIR",
        description = "With --initiator: where the suite publishes its nic.addr for the initiating target to read.")
    Path initiatorExchange;

    @Option(names = "--interop", paramLabel = "udp:HOST[:PORT]", description = {
        "Last, a transfer with the target as initiator under loss, from this address: the suite publishes itself as a " +
        "serving NIC (a 4 MiB region) in --interop-exchange and waits (120 s) for the target to connect, write and " +
        "read back (spraynic transfer --peer-kind nic --role client --exchange DIR), dropping --interop-loss of each " +
        "direction."})
    String interop;

    @Option(names = "--interop-exchange", paramLabel = "DIR",
        description = "With --interop: where the suite publishes its nic.addr.")
    Path interopExchange;

    @Option(names = "--interop-loss", defaultValue = "5", paramLabel = "PERCENT",
        description = "With --interop: the share of packets the suite drops each way, 0 to 50 (default ${DEFAULT-VALUE}).")
    double interopLoss;

    @Option(names = "--interop-seed", defaultValue = "1", paramLabel = "N",
        description = "With --interop: the seed of the drops (default ${DEFAULT-VALUE}).")
    long interopSeed;

    @Option(names = "--psk-file", paramLabel = "PATH", description = {
        "The target's pre-shared key (spraynic nic --psk-file): every CONNECT carries its proof, the keys are salted " +
        "with it, and the PSK checks (S12.2) run; without it they are not tested."})
    Path pskFile;

    @Option(names = "--target-idle-timeout", defaultValue = "30", paramLabel = "SECONDS", description = {
        "The target's idle timeout (spraynic nic --idle-timeout, default ${DEFAULT-VALUE}); the liveness checks " +
        "(S12.10) run when it is at most 12 s."})
    double targetIdleTimeout;

    @Option(names = "--target-connection-limit", defaultValue = "16", paramLabel = "N", description = {
        "Connections the target accepts from one source (spraynic nic --max-connections-per-source, default " +
        "${DEFAULT-VALUE}; it counts per worker: give it times the workers): the limit check (S12.9) opens one more."})
    int targetConnectionLimit;

    @Option(names = "--target-response-rate", defaultValue = "50000", paramLabel = "PER_SECOND", description = {
        "The target's response bucket (S12.9: RETRYs and REJECTs a second; spraynic nic --connect-response-rate, " +
        "default ${DEFAULT-VALUE}; it counts per worker: give it times the workers), which limits.response-rate " +
        "and resources.no-resources-rate (its NO_RESOURCES NACKs, S10.2-2) judge against."})
    int targetResponseRate;

    @Option(names = "--target-response-burst", defaultValue = "256", paramLabel = "N", description = {
        "The target's response burst (S12.9; spraynic nic --connect-response-burst, default ${DEFAULT-VALUE})."})
    int targetResponseBurst;

    @Option(names = "--target-late-margin-max", defaultValue = "0", paramLabel = "SECONDS", description = {
        "The target's lateMarginMax (PROTOCOL.md S6.8.1; spraynic nic: 2), which S6.8-2's check needs (default " +
        "${DEFAULT-VALUE}: not given, that check not tested)."})
    double targetLateMarginMax;

    @Option(names = "--target-deregister-command", paramLabel = "COMMAND", description = {
        "A shell command that deregisters the target's exposed region and exits 0 once done (for SprayNIC: spraynic " +
        "deregister --exchange DIR). The suite runs it last, in the middle of a READ response, to check S9.3.2-1; " +
        "without it that check is not tested. The target has no region afterwards."})
    String targetDeregisterCommand;

    @Option(names = "--target-deregister-timeout", defaultValue = "30", paramLabel = "SECONDS",
        description = "How long the deregister command may take (default ${DEFAULT-VALUE}).")
    double targetDeregisterTimeout;

    @Option(names = "--groups", split = ",", paramLabel = "GROUP[,GROUP...]", description = {
        "Run only these groups of checks (the handshake's always run): handshake, data, malformed, sender, timers, " +
        "errors, security, close, psk, limits, liveness, ecn, multipath, resources (default: all)."})
    java.util.List<String> groups;

    @Option(names = "--strict", description = {
        "Exit 1 also when a MUST check could not run (NOT_TESTED: a group's connection failed, a target option not " +
        "given, a group left out with --groups), not only when one failed: for a CI gate."})
    boolean strict;

    @Option(names = "--json", description = "Print the report as one JSON object instead of a table.")
    boolean json;

    @Option(names = "--output", paramLabel = "FILE", description = "Also write the JSON report to FILE.")
    Path output;

    @Option(names = "--junit", paramLabel = "FILE", description = "Also write the report as JUnit XML to FILE (for CI).")
    Path junit;

    public Integer call() throws Exception
    {
        for (final String[] udp : new String[][]{{"--target", target}, {"--initiator", initiator},
            {"--interop", interop}})
        {
            if (null != udp[1])
            {
                udp(udp[0], udp[1]);
            }
        }
        final InetSocketAddress address = udp("--target", target);
        final InetSocketAddress localAddress;
        try
        {
            localAddress = Target.hostPort(local, 4791, "--local");
        }
        catch (final IllegalArgumentException e)
        {
            throw new BadOption("--local", local, "is not HOST[:PORT] with a port 1..65535", "try --local 127.0.0.2:4791");
        }
        BadOption.range("--planes", planes, 1, 255);
        BadOption.range("--target-connection-limit", targetConnectionLimit, 1, 256);
        BadOption.range("--target-idle-timeout", targetIdleTimeout, 0, 86_400, 3);
        paired("--interop", null == interop ? null : interop, "--interop-exchange",
            null == interopExchange ? null : interopExchange.toString(), "udp:127.0.0.1");
        paired("--initiator", null == initiator ? null : initiator, "--initiator-exchange",
            null == initiatorExchange ? null : initiatorExchange.toString(), "udp:127.0.0.1");
        BadOption.range("--interop-loss", interopLoss, 0, 50, 5);
        BadOption.range("--target-response-rate", targetResponseRate, 1, 100_000_000);
        BadOption.range("--target-response-burst", targetResponseBurst, 1, 1_000_000);
        BadOption.range("--target-deregister-timeout", targetDeregisterTimeout, 0.1, 3_600, 30);
        BadOption.range("--target-late-margin-max", targetLateMarginMax, 0, 3_600, 2);
        if (null != targetDeregisterCommand && targetDeregisterCommand.isBlank())
        {
            throw new BadOption("--target-deregister-command", "''", "is empty",
                "try --target-deregister-command 'spraynic deregister --exchange DIR'");
        }
        if (null != groups && !ConformanceSuite.GROUPS.containsAll(groups))
        {
            throw new BadOption("--groups", String.join(",", groups), "names a group the suite does not have",
                "try --groups errors (groups: " + String.join(", ", ConformanceSuite.GROUPS) + ")");
        }
        final byte[] psk;
        try
        {
            psk = null == pskFile ? null : PreSharedKeyFile.read(pskFile);
        }
        catch (final IllegalArgumentException e)
        {
            throw new BadOption("--psk-file", pskFile.toString(), "is refused (" + e.getMessage().strip()
                .replace('\n', ' ') + ")", "try --psk-file with the key file the target was given (its --psk-file)");
        }
        // the exchange directories the suite publishes into: the user's own, that nobody else may write into (a link
        // planted at nic.addr.tmp had the suite truncate its target); --exchange is the target's, read as
        // Target.readExchange reads it (a file of this user, root or the directory's owner)
        for (final Path directory : new Path[]{initiatorExchange, interopExchange})
        {
            if (null != directory)
            {
                io.spraynic.apps.exchange.PeerExchange.prepare(directory);
            }
        }
        long[] exposed;
        if (null != exchange)
        {
            exposed = Target.readExchange(exchange, 60_000);
        }
        else if (null != region)
        {
            final String[] parts = region.split(":");
            try
            {
                if (parts.length != 3)
                {
                    throw new NumberFormatException();
                }
                exposed = new long[]{planes, Long.parseLong(parts[0]), Long.parseLong(parts[1]), Long.parseLong(parts[2])};
            }
            catch (final NumberFormatException e)
            {
                throw new BadOption("--region", region, "is not ADDR:RKEY:LENGTH, three whole numbers",
                    "try --region 140000000:1:1048576");
            }
            if (exposed[2] < 0 || exposed[2] > 0xFFFF_FFFFL || exposed[3] < 0)
            {
                // a u32 on the wire (RETH): a wider or signed number would be cut to some other key
                throw new BadOption("--region", region, "needs an RKEY of 0..4294967295 and a LENGTH not negative",
                    "try --region 140000000:1:1048576");
            }
        }
        else
        {
            throw new BadOption("--exchange", "(none)", "the suite writes and reads the target's memory",
                "give --exchange DIR or --region ADDR:RKEY:LENGTH");
        }
        final ConformanceReport report = ConformanceSuite.run(new Target(address, localAddress, (int)exposed[0],
            exposed[1], (int)exposed[2], exposed[3], psk, targetIdleTimeout, targetConnectionLimit)
            .withResponseRate(targetResponseRate, targetResponseBurst).withLateMarginMax(targetLateMarginMax),
            null == initiator ? null : Target.parseUdp(initiator), initiatorExchange,
            null == groups ? null : java.util.Set.copyOf(groups),
            null == interop ? null : Target.parseUdp(interop), interopExchange, interopLoss / 100, interopSeed,
            null == targetDeregisterCommand ? null : RegionRevoker.command(targetDeregisterCommand,
                java.time.Duration.ofMillis((long)(targetDeregisterTimeout * 1000))));
        System.out.print(json ? report.toJson() + System.lineSeparator() : report.toText());
        if (null != output)
        {
            OutputFile.writeString(output, report.toJson() + System.lineSeparator());
        }
        if (null != junit)
        {
            OutputFile.writeString(junit, report.toJunitXml());
        }
        if (strict && !report.mustFailed() && report.mustNotTested() > 0)
        {
            System.err.printf(java.util.Locale.ROOT, "spraynic conformance: %d MUST check(s) could not run " +
                "(--strict fails the run for it)%n", report.mustNotTested());
        }
        System.out.flush();
        return report.exitStatus(strict);
    }

    /** @return {@code spec} ({@code udp:HOST[:PORT]}) as an address, or a {@link BadOption} naming {@code option}. */
    private static InetSocketAddress udp(final String option, final String spec) throws java.io.IOException
    {
        try
        {
            return Target.parseUdp(spec);
        }
        catch (final IllegalArgumentException e)
        {
            throw new BadOption(option, spec, "is not a UDP target udp:HOST[:PORT] (port 1..65535)",
                "try " + option + " udp:127.0.0.1");
        }
    }

    /** Refuses one of two options that go together given without the other. */
    private static void paired(final String option, final String value, final String partner, final String partnerValue,
        final String example)
    {
        if (null != value && null == partnerValue)
        {
            throw new BadOption(option, value, "needs " + partner + " DIR beside it",
                "try " + option + " " + value + " " + partner + " DIR");
        }
        if (null == value && null != partnerValue)
        {
            throw new BadOption(partner, partnerValue, "needs " + option + " udp:HOST[:PORT] beside it",
                "try " + partner + " " + partnerValue + " " + option + " " + example);
        }
    }
}
