package io.spraynic.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code spraynic demo --fabric linux}: the main job across the Linux ECMP lab ({@code deploy/lab/lab}): kernel
 * routers in network namespaces, four equal-cost links per plane. Two NIC processes on {@code net_af_packet} (or
 * {@code net_af_xdp}, or kernel UDP sockets: {@link LabPortKind}), each
 * given its own addresses and gateways and the other's addresses only: a serving {@code spraynic nic} in host B and a
 * {@code spraynic transfer} visiting it from host A; spray, then RoCEv2 over the same routers and loss. The summary
 * adds the packets per core link the routers counted. The lab is removed at the end, also on failure or Ctrl-C.
 */
final class LinuxFabricDemo
{
    /** The NICs' path MTU on the lab: 1024, the largest RoCE MTU its 1500-byte veth links carry. */
    static final int PATH_MTU = 1024;
    private static final Pattern NUMBER = Pattern.compile("\"%s\":(-?[0-9.eE+-]+)");

    /** {@link Settings#rocev2AckTimeout()}: derived from round trips measured to B's NIC ({@link RoceAckTimeout}). */
    static final int ACK_TIMEOUT_FROM_RTT = 0;
    /** {@link Settings#warmupBytes()}: each run warms up with as many bytes as it then measures. */
    static final long WARMUP_AS_TIMED = -1;

    /**
     * @param rocev2AckTimeout the RoCEv2 visitor's exponent, or {@link #ACK_TIMEOUT_FROM_RTT}.
     * @param warmupBytes      each run's verified warm-up before its measured part, 0 for none, or
     *                         {@link #WARMUP_AS_TIMED}.
     * @param port             the NICs' ports, one per plane ({@code --port-kind}).
     */
    record Settings(int planes, int paths, double lossPct, long sprayBytes, long rocev2Bytes, int timeoutSeconds,
        int rocev2AckTimeout, boolean json, boolean noBaseline, long warmupBytes, LabPortKind port)
    {
        long warmupFor(final long bytes)
        {
            return warmupBytes == WARMUP_AS_TIMED ? bytes : Math.min(warmupBytes, bytes);
        }
    }

    /**
     * What one transfer across the lab did (its measured part: after the warm-up, if any).
     *
     * @param warmupBytes  the verified warm-up before it (0: cold); @param warmupSeconds its time.
     * @param ackTimeout   RoCEv2's local ACK timeout and where it came from; null for spray.
     */
    record Run(String mode, boolean verified, long bytes, double seconds, long dataDropped, long retransmitted,
        Map<String, long[]> perLink, String output, long warmupBytes, double warmupSeconds,
        RoceAckTimeout.Choice ackTimeout)
    {
        double goodputGbps()
        {
            return seconds > 0 ? 2 * bytes * 8 / seconds / 1e9 : 0;
        }
    }

    /** deploy/lab/lab's exit status when the id is another run's. */
    private static final int ID_TAKEN_STATUS = 3;

    private final Settings settings;
    private final Path script;
    private final String id;
    private final Path work;
    private final List<Process> processes = new ArrayList<>();
    /** Whether this demo's {@code up} ran and did not find the id another run's: only then is a down ours to run. */
    private volatile boolean labOurs;
    private Map<String, String> status = Map.of();

    private LinuxFabricDemo(final Settings settings, final Path script, final String id, final Path work)
    {
        this.settings = settings;
        this.script = script;
        this.id = id;
        this.work = work;
    }

    /** Runs the demo; @return the exit code (0: both transfers verified). */
    static int run(final Settings settings, final PrintStream out) throws IOException, InterruptedException
    {
        if (!isRoot())
        {
            throw new IllegalArgumentException("demo --fabric linux needs root: it builds network namespaces, veth " +
                "links, routes and nftables rules (run it as root, e.g. sudo ./spraynic demo --fabric linux)");
        }
        final Path script = labScript();
        final Path work = Files.createTempDirectory("spraynic-linux-demo-");
        final LinuxFabricDemo demo = new LinuxFabricDemo(settings, script, "d" + ProcessHandle.current().pid() % 10_000,
            work);
        final Thread cleanup = new Thread(demo::tearDown, "spraynic-linux-demo-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup); // Ctrl-C: the lab goes too
        try
        {
            return demo.run(out);
        }
        finally
        {
            demo.tearDown();
            try
            {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            }
            catch (final IllegalStateException ignored)
            {
                // shutting down: the hook does the same
            }
        }
    }

    private int run(final PrintStream out) throws IOException, InterruptedException
    {
        if (!settings.json())
        {
            out.print(header(settings, id));
        }
        final List<String> up = new ArrayList<>(List.of("up", "--flat", "--planes", Integer.toString(settings.planes())));
        up.addAll(settings.port().labUpOptions());
        status = flat(lab(up.toArray(String[]::new)));
        lab("set", "core", "--drop", Double.toString(settings.lossPct() / 100));
        final Run spray = transfer("spray", settings.sprayBytes(), settings.paths(), out);
        final Run rocev2 = settings.noBaseline() ? null : transfer("rocev2", settings.rocev2Bytes(), 1, out);
        if (settings.json())
        {
            out.println(json(settings, spray, rocev2));
        }
        else if (null != rocev2)
        {
            out.print(ratio(spray, rocev2));
        }
        return spray.verified() && (null == rocev2 || rocev2.verified()) ? 0 : 1;
    }

    /** @return the text summary's first line: the lab, its loss and how the transfers are measured. */
    static String header(final Settings settings, final String id)
    {
        return String.format(Locale.ROOT, "Linux ECMP lab %s: %d plane(s) of two kernel routers joined by 4 " +
            "equal-cost links, %.2f %% random loss on every core link each way; two NIC processes on %s; " +
            "%s%n", id, settings.planes(), settings.lossPct(), settings.port().description(), settings.warmupBytes() == 0 ? "measured cold (no " +
            "warm-up)" : "each transfer measured warm, after a verified warm-up over the same connection" +
            (settings.warmupBytes() == WARMUP_AS_TIMED ? " as large as its measured part" : " of " +
            BadOption.size(settings.warmupBytes())));
    }

    /** @return the text summary's last line: spray's goodput over RoCEv2's, both measured the same way. */
    static String ratio(final Run spray, final Run rocev2)
    {
        return String.format(Locale.ROOT, "spray ÷ RoCEv2 goodput across the same routers and loss: %.1fx%n",
            spray.goodputGbps() / Math.max(1e-9, rocev2.goodputGbps()));
    }

    /** @return the {@code --json} summary: spray's run, RoCEv2's (if any) inside it as {@code "rocev2"}. */
    static String json(final Settings settings, final Run spray, final Run rocev2)
    {
        final Json summary = json(settings, spray);
        if (null != rocev2)
        {
            summary.raw("rocev2", json(settings, rocev2).build());
        }
        return summary.build();
    }

    private Run transfer(final String mode, final long bytes, final int paths, final PrintStream out)
        throws IOException, InterruptedException
    {
        if (!settings.json())
        {
            out.print(started(mode, bytes, paths));
        }
        final Path served = Files.createDirectories(work.resolve(mode + "-served"));
        final Process nic = start("b", served.resolveSibling(mode + "-nic.out"), List.of("nic", "--config",
            config("b", mode + "-b").toString(), "--mode", mode, "--ip", perPlane("b", "ipv4"), "--gateway",
            perPlane("b", "gateway"), "--expose", Long.toString(bytes), "--paths", Integer.toString(paths), "--exchange",
            served.toString(), "--seconds", Integer.toString(4 * settings.timeoutSeconds()), "--rocev2-ack-timeout",
            // B only responds, and a responder's timer never runs: with the derived one, the nic command's default
            Integer.toString(settings.rocev2AckTimeout() == ACK_TIMEOUT_FROM_RTT ? 14 : settings.rocev2AckTimeout())));
        try
        {
            final Path addr = served.resolve("nic.addr");
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(settings.timeoutSeconds());
            while (!Files.exists(addr) && nic.isAlive() && System.nanoTime() < deadline)
            {
                Thread.sleep(50);
            }
            if (!Files.exists(addr))
            {
                throw new IllegalStateException("the NIC in host B did not start: " +
                    Files.readString(served.resolveSibling(mode + "-nic.out")));
            }
            // what host A is told: B's addresses, nothing else (RoCEv2 also exchanges queue pairs, out of band)
            final Path visit = mode.equals("rocev2") ? served : Files.createDirectories(work.resolve(mode + "-visit"));
            if (!mode.equals("rocev2"))
            {
                Files.copy(addr, visit.resolve("nic.addr.tmp"));
                Files.move(visit.resolve("nic.addr.tmp"), visit.resolve("nic.addr"), StandardCopyOption.ATOMIC_MOVE);
            }
            // RoCEv2: the requester's ACK timeout, from round trips to B's NIC now, as an operator would set it
            final RoceAckTimeout.Choice ackTimeout = !mode.equals("rocev2") ? null :
                settings.rocev2AckTimeout() == ACK_TIMEOUT_FROM_RTT ? RoceAckTimeout.fromRtt(flat(lab("rtt", "b",
                "--count", Integer.toString(RoceAckTimeout.ECHOES), "--flat"))) :
                RoceAckTimeout.given(settings.rocev2AckTimeout());
            final long warmup = settings.warmupFor(bytes);
            final Path output = work.resolve(mode + "-transfer.out");
            final List<String> arguments = new ArrayList<>(List.of("transfer", "--config",
                config("a", mode + "-a").toString(), "--mode", mode, "--peer-kind", "nic", "--ip", perPlane("a", "ipv4"),
                "--gateway", perPlane("a", "gateway"), "--paths", Integer.toString(paths), "--exchange", visit.toString(),
                "--size", Long.toString(bytes), "--timeout", Integer.toString(settings.timeoutSeconds()),
                "--rocev2-ack-timeout", Integer.toString(null == ackTimeout ? 14 : ackTimeout.exponent()), "--json",
                "--warmup", Long.toString(warmup)));
            if (warmup > 0)
            {
                arguments.add("--warmup-hold");
            }
            final Map<String, Long> before;
            final Process transfer = start("a", output, arguments);
            if (warmup > 0)
            {
                // the routers' counters are read while the visitor holds after its verified warm-up: the run's
                // figures are its measured part's alone
                awaitWarm(transfer, visit.resolve(TransferPhases.WARM), output);
                before = counters();
                io.spraynic.apps.exchange.PeerExchange.publish(visit, TransferPhases.GO, "go");
            }
            else
            {
                before = counters();
            }
            if (!transfer.waitFor(3L * settings.timeoutSeconds(), TimeUnit.SECONDS))
            {
                transfer.destroyForcibly();
            }
            final Map<String, Long> after = counters();
            final String text = Files.readString(output);
            // every data packet A put on a core link was forwarded or dropped there at random; the transfer needs
            // bytes / MTU. Lost: dropped at random, or forwarded and dropped by the link (a TBF's queue, when the lab
            // has --rate), as the lab test counts them (link_dropped_large_packets)
            final long randomDrops = delta(before, after, "ab", "dropped_large_packets");
            final long sent = delta(before, after, "ab", "forwarded_large_packets") + randomDrops;
            final long dropped = randomDrops + delta(before, after, "ab", "link_dropped_large_packets");
            final Run run = new Run(mode, text.contains("\"verified\":true"), bytes, number(text, "seconds"), dropped,
                sent - bytes / PATH_MTU, perLink(before, after), text, warmup, number(text, "warmupSeconds"), ackTimeout);
            if (!settings.json())
            {
                out.print(text(run));
            }
            return run;
        }
        finally
        {
            nic.destroy();
            if (!nic.waitFor(20, TimeUnit.SECONDS))
            {
                nic.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** Waits for a visitor to hold after its verified warm-up; throws with its output if it ends or takes too long. */
    private void awaitWarm(final Process transfer, final Path warm, final Path output)
        throws IOException, InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3L * settings.timeoutSeconds());
        while (!Files.exists(warm))
        {
            if (!transfer.isAlive() || System.nanoTime() >= deadline)
            {
                transfer.destroyForcibly();
                throw new IllegalStateException("the transfer from host A did not hold after its warm-up: " +
                    Files.readString(output).strip());
            }
            Thread.sleep(5);
        }
    }

    /** @return the text summary's line as a transfer starts. */
    static String started(final String mode, final long bytes, final int paths)
    {
        return String.format(Locale.ROOT, "%s: %d MiB written from host A into host B's NIC and read back, %d path%s%n",
            mode.equals("spray") ? "spray" : "RoCEv2 RC", bytes >> 20, paths, paths == 1 ? "" : "s");
    }

    /**
     * @return the text summary of one transfer: the same figures as its {@code --json} object ({@link #json(Settings,
     * Run)}), in words.
     */
    static String text(final Run run)
    {
        if (!run.verified())
        {
            return String.format(Locale.ROOT, "  NOT VERIFIED: %s%n", run.output().strip());
        }
        final StringBuilder text = new StringBuilder();
        text.append(String.format(Locale.ROOT, "  VERIFIED: %d MiB each way in %.3f s: %.3f Gb/s of goodput (both " +
            "ways), %s%n", run.bytes() >> 20, run.seconds(), run.goodputGbps(), run.warmupBytes() == 0 ?
            "cold (no warm-up)" : String.format(Locale.ROOT, "warm: after a verified warm-up of %s over the same " +
            "connection (%.3f s), which these figures leave out", BadOption.size(run.warmupBytes()),
            run.warmupSeconds())));
        if (null != run.ackTimeout())
        {
            text.append(String.format(Locale.ROOT, "  local ACK timeout exponent %s%n", run.ackTimeout().describe()));
        }
        text.append(String.format(Locale.ROOT, "  A->B data packets lost on the core links %,d, A sent again %,d (%s " +
            "per loss)%n", run.dataDropped(), run.retransmitted(), run.dataDropped() == 0 ? "n/a" :
            String.format(Locale.ROOT, "%.2f", (double)run.retransmitted() / run.dataDropped())));
        final StringBuilder links = new StringBuilder();
        for (final Map.Entry<String, long[]> e : run.perLink().entrySet())
        {
            links.append(links.isEmpty() ? "" : ", ").append(e.getKey()).append(' ').append(e.getValue()[0])
                .append('/').append(e.getValue()[1]);
        }
        text.append(String.format(Locale.ROOT, "  packets per core link, A->B/B->A, counted by the routers: %s%n",
            links));
        return text.toString();
    }

    private static Json json(final Settings settings, final Run run)
    {
        final StringBuilder links = new StringBuilder("{");
        for (final Map.Entry<String, long[]> e : run.perLink().entrySet())
        {
            links.append(links.length() > 1 ? "," : "").append('"').append(e.getKey()).append("\":[")
                .append(e.getValue()[0]).append(',').append(e.getValue()[1]).append(']');
        }
        final Json json = new Json().field("mode", run.mode()).field("fabric", "linux").field("bytes", run.bytes())
            .field("seconds", run.seconds()).field("goodputGbps", run.goodputGbps()).field("verified", run.verified())
            .field("dataDroppedAB", run.dataDropped())
            // a transfer that failed part-way sent fewer packets than the whole needs: no resend count to give
            .raw("retransmittedAB", run.verified() ? Long.toString(run.retransmitted()) : "null")
            .field("planes", settings.planes()).field("lossPct", settings.lossPct())
            .field("error", run.verified() ? "" : tail(run.output()))
            .field("warm", run.warmupBytes() > 0).field("warmupBytes", run.warmupBytes())
            .raw("warmupSeconds", Double.isNaN(run.warmupSeconds()) ? "null" : Double.toString(run.warmupSeconds()))
            .raw("packetsPerLink", links.append('}').toString());
        if (null != run.ackTimeout())
        {
            json.raw("ackTimeout", "{" + run.ackTimeout().jsonFields() + "}");
        }
        return json;
    }

    // ---- the lab script and the NIC processes

    private String lab(final String... arguments) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of("python3", script.toString(), "--id", id));
        command.addAll(List.of(arguments));
        final boolean up = "up".equals(arguments[0]);
        if (up)
        {
            labOurs = true; // from its start: a demo stopped while up runs still removes what up made
        }
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(120, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new IllegalStateException("deploy/lab/lab " + arguments[0] + " did not finish in 120 s: " + output.strip());
        }
        if (up && process.exitValue() == ID_TAKEN_STATUS)
        {
            labOurs = false; // another run's lab (a pid seen again mod 10,000): never taken down from here
        }
        if (process.exitValue() != 0)
        {
            throw new IllegalStateException("deploy/lab/lab " + arguments[0] + " failed: " + output.strip());
        }
        return output;
    }

    private void tearDown()
    {
        synchronized (processes)
        {
            for (final Process process : processes)
            {
                process.destroyForcibly();
            }
            processes.clear();
        }
        if (!labOurs)
        {
            return;
        }
        try
        {
            new ProcessBuilder("python3", script.toString(), "--id", id, "down").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(120, TimeUnit.SECONDS);
        }
        catch (final IOException | InterruptedException ignored)
        {
            // best effort: lab --id ID down removes what is left
        }
    }

    private Process start(final String host, final Path output, final List<String> arguments) throws IOException
    {
        final List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", "spl" + id + "-h" + host));
        command.addAll(javaCommand(arguments));
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().put("SPRAYNIC_RUN_DIR", work.resolve("run-" + host).toString());
        synchronized (processes)
        {
            final Process process = builder.start();
            processes.add(process);
            return process;
        }
    }

    /** This JVM's java, its -- options (native access) and class path, running the CLI with {@code arguments}. */
    static List<String> javaCommand(final List<String> arguments)
    {
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(argument -> argument.startsWith("--")).toList());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), SprayNic.class.getName()));
        command.addAll(arguments);
        return command;
    }

    private String perPlane(final String host, final String key)
    {
        final List<String> values = new ArrayList<>();
        for (int plane = 1; plane <= settings.planes(); plane++)
        {
            values.add(status.get("hosts." + host + ".planes." + plane + "." + key));
        }
        return String.join(",", values);
    }

    private Path config(final String host, final String name) throws IOException
    {
        final List<String> interfaces = new ArrayList<>();
        final List<String> addresses = new ArrayList<>();
        for (int plane = 1; plane <= settings.planes(); plane++)
        {
            interfaces.add(status.get("hosts." + host + ".planes." + plane + ".dev"));
            addresses.add(status.get("hosts." + host + ".planes." + plane + ".ipv4"));
        }
        return Files.writeString(work.resolve(name + ".toml"),
            settings.port().config("spraynic-lab-" + id + "-" + name, interfaces, addresses));
    }

    // ---- counters

    private Map<String, Long> counters() throws IOException, InterruptedException
    {
        final Map<String, Long> values = new HashMap<>();
        for (final Map.Entry<String, String> e : flat(lab("counters", "--flat")).entrySet())
        {
            if (e.getValue().matches("\\d+"))
            {
                values.put(e.getKey(), Long.parseLong(e.getValue()));
            }
        }
        return values;
    }

    private long delta(final Map<String, Long> before, final Map<String, Long> after, final String direction,
        final String counter)
    {
        long sum = 0;
        for (final Map.Entry<String, Long> e : after.entrySet())
        {
            final String key = e.getKey();
            if (key.matches("links\\.p\\d+l\\d+\\.directions\\." + direction + "\\." + counter))
            {
                sum += e.getValue() - before.getOrDefault(key, 0L);
            }
        }
        return sum;
    }

    private static Map<String, long[]> perLink(final Map<String, Long> before, final Map<String, Long> after)
    {
        final Map<String, long[]> links = new TreeMap<>();
        final Pattern key = Pattern.compile("links\\.(p\\d+l\\d+)\\.directions\\.(ab|ba)\\.forwarded_packets");
        for (final Map.Entry<String, Long> e : after.entrySet())
        {
            final Matcher m = key.matcher(e.getKey());
            if (m.matches())
            {
                links.computeIfAbsent(m.group(1), k -> new long[2])[m.group(2).equals("ab") ? 0 : 1] =
                    e.getValue() - before.getOrDefault(e.getKey(), 0L);
            }
        }
        return links;
    }

    static Map<String, String> flat(final String output)
    {
        final Map<String, String> values = new HashMap<>();
        for (final String line : output.split("\n"))
        {
            final int equals = line.indexOf('=');
            if (equals > 0)
            {
                values.put(line.substring(0, equals), line.substring(equals + 1).strip());
            }
        }
        return values;
    }

    private static String tail(final String output)
    {
        final String text = output.strip();
        return text.substring(Math.max(0, text.length() - 400));
    }

    private static double number(final String text, final String field)
    {
        final Matcher m = Pattern.compile(String.format(Locale.ROOT, NUMBER.pattern(), field)).matcher(text);
        return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
    }

    private static boolean isRoot()
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/self/status")))
            {
                if (line.startsWith("Uid:"))
                {
                    return "0".equals(line.split("\\s+")[2]); // the effective uid
                }
            }
        }
        catch (final IOException ignored)
        {
            // not Linux: no lab either
        }
        return false;
    }

    /** deploy/lab/lab beside the installation ({@code -Dspraynic.home}, as ./spraynic sets), or below the cwd. */
    private static Path labScript()
    {
        final List<Path> candidates = new ArrayList<>();
        final String home = System.getProperty("spraynic.home");
        if (null != home)
        {
            candidates.add(Path.of(home, "deploy", "lab", "lab"));
        }
        candidates.add(Path.of("deploy", "lab", "lab"));
        candidates.add(Path.of("..", "deploy", "lab", "lab"));
        for (final Path candidate : candidates)
        {
            if (Files.isRegularFile(candidate))
            {
                return candidate.toAbsolutePath().normalize();
            }
        }
        throw new IllegalArgumentException("demo --fabric linux needs the lab script deploy/lab/lab (looked in " +
            candidates + "): run it from the SprayNIC directory, or through ./spraynic");
    }
}
