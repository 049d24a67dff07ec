package io.spraynic.bench.raw;

import io.spraynic.bench.NativeBinaries;
import io.spraynic.dpdk.NativeLibrary;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Java against C on the same raw loop, in one invocation, placed one of two ways:
 * <ul>
 *   <li>{@link Placement#PROCESSES}: rounds alternate a Java run and a C run ({@code spraynic-rawloop}), each in
 *   a fresh process (EAL starts once per process), and the medians give the ratio;</li>
 *   <li>{@link Placement#SAME_PROCESS}: one Java process loads the C loop ({@code libspraynic_rawloop.so}) and
 *   alternates slices of both on one port, pool and set of mbufs ({@link RawLoop#runSameProcess}), so that a
 *   round's two halves differ only in the language; the median of the rounds' ratios is the steadier figure.</li>
 * </ul>
 * On a shared, noisy machine only such a same-run ratio means anything.
 */
public final class RawLoopComparison
{
    /** System property naming the C binary; else it is looked up under {@code spraynic.home}. */
    public static final String C_BINARY_PROPERTY = "spraynic.rawloop.path";

    /** System property naming the C loop library; else it is looked up under {@code spraynic.home}. */
    public static final String C_LIBRARY_PROPERTY = "spraynic.rawloop.library";

    private static final Pattern MPPS = Pattern.compile("\"mpps\":([0-9.]+)");
    private static final Pattern CPU_MPPS = Pattern.compile("\"cpuMpps\":([0-9.]+)");
    private static final Pattern PACKETS = Pattern.compile("\"packets\":([0-9]+)");
    private static final Pattern SAME_SHIM = Pattern.compile("\"sameShim\":(true|false)");

    /** Where the two loops run. */
    public enum Placement
    {
        PROCESSES, SAME_PROCESS;

        public String text()
        {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /**
     * Medians and every round's Mpps, by wall-clock time and per CPU second of the loop's thread.
     *
     * @param sameShim for {@link Placement#SAME_PROCESS}, whether both languages called one loaded copy of the shim
     *                 (always true for separate processes, which each load the one file).
     */
    public record Summary(
        String pmd, String mode, String touch, Placement placement, int burst, int frameLength, double[] javaMpps,
        double[] cMpps, double[] javaCpuMpps, double[] cCpuMpps, boolean sameShim)
    {
        public double javaMedian()
        {
            return median(javaMpps);
        }

        public double cMedian()
        {
            return median(cMpps);
        }

        public double ratio()
        {
            return javaMedian() / cMedian();
        }

        /**
         * @return Java ÷ C of the medians per CPU second: the time a round waited for a core (other
         * work on a shared machine) drops out.
         */
        public double cpuRatio()
        {
            return median(javaCpuMpps) / median(cCpuMpps);
        }

        /**
         * @return the median of each round's Java ÷ C per CPU second: with both halves of a round minutes apart at
         * most (seconds apart in one process), what the machine did meanwhile cancels out of each ratio.
         */
        public double pairedCpuRatio()
        {
            final double[] ratios = new double[javaCpuMpps.length];
            for (int i = 0; i < ratios.length; i++)
            {
                ratios[i] = javaCpuMpps[i] / cCpuMpps[i];
            }
            return median(ratios);
        }

        public String toText()
        {
            return String.format(Locale.ROOT,
                "raw %s %s, touch %s (burst %d, %d B), %s, median of %d alternating rounds: java %.2f Mpps, c %.2f Mpps, " +
                "java/c = %.3f; per CPU second: java %.2f, c %.2f, java/c = %.3f, median of the rounds' java/c = %.3f%s",
                pmd, mode, touch, burst, frameLength, placement.text(), javaMpps.length, javaMedian(), cMedian(), ratio(),
                median(javaCpuMpps), median(cCpuMpps), cpuRatio(), pairedCpuRatio(),
                sameShim ? "" : " (WARNING: the C library called another copy of the shim)");
        }

        public String toJson()
        {
            return String.format(Locale.ROOT,
                "{\"pmd\":\"%s\",\"mode\":\"%s\",\"touch\":\"%s\",\"placement\":\"%s\",\"sameShim\":%b,\"burst\":%d," +
                "\"frameLength\":%d,\"rounds\":%d,\"javaMpps\":%.4f,\"cMpps\":%.4f,\"ratio\":%.4f,\"javaRounds\":%s," +
                "\"cRounds\":%s,\"javaCpuMpps\":%.4f,\"cCpuMpps\":%.4f,\"cpuRatio\":%.4f,\"pairedCpuRatio\":%.4f," +
                "\"javaCpuRounds\":%s,\"cCpuRounds\":%s}",
                pmd, mode, touch, placement.text(), sameShim, burst, frameLength, javaMpps.length, javaMedian(), cMedian(),
                ratio(), rounds(javaMpps), rounds(cMpps), median(javaCpuMpps), median(cCpuMpps), cpuRatio(),
                pairedCpuRatio(), rounds(javaCpuMpps), rounds(cCpuMpps));
        }

        private static String rounds(final double[] values)
        {
            return Arrays.toString(values).replace(" ", "");
        }
    }

    private RawLoopComparison()
    {
    }

    /**
     * @param seconds   measured seconds per run (per slice with {@link Placement#SAME_PROCESS}).
     * @param rounds    alternating rounds (per process with {@link Placement#SAME_PROCESS}).
     * @param processes with {@link Placement#SAME_PROCESS}: processes whose rounds are pooled; else unused.
     */
    public static Summary run(
        final RawLoop.Pmd pmd,
        final RawLoop.Mode mode,
        final RawLoop.Touch touch,
        final Placement placement,
        final double seconds,
        final int burst,
        final int frameLength,
        final int rounds,
        final int processes,
        final Consumer<String> log) throws IOException, InterruptedException
    {
        if (rounds < 1 || processes < 1)
        {
            throw new IllegalArgumentException("rounds and processes must be >= 1 (got " + rounds + ", " + processes + ")");
        }
        final String[] common = {
            "--pmd", pmd.text(), "--mode", mode.text(), "--touch", touch.text(),
            "--seconds", Double.toString(seconds), "--burst", Integer.toString(burst), "--length", Integer.toString(frameLength)};
        final String modeText = mode.text();
        if (placement == Placement.SAME_PROCESS)
        {
            return runSameProcess(pmd, mode, touch, seconds, burst, frameLength, rounds, processes, common, log);
        }

        final Path cBinary = NativeBinaries.locate(C_BINARY_PROPERTY, "spraynic-rawloop", "the C raw loop");
        final List<String> javaCommand = javaCommand(null);
        javaCommand.addAll(List.of(common));
        final List<String> cCommand = new ArrayList<>();
        cCommand.add(cBinary.toString());
        cCommand.addAll(List.of(common));

        final double[] java = new double[rounds];
        final double[] c = new double[rounds];
        final double[] javaCpu = new double[rounds];
        final double[] cCpu = new double[rounds];
        for (int round = 0; round < rounds; round++)
        {
            final double[] javaRound = runOnce(javaCommand, seconds);
            java[round] = javaRound[0];
            javaCpu[round] = javaRound[1];
            log.accept(String.format(Locale.ROOT, "round %d: java %.2f Mpps (%.2f per CPU second)", round + 1, java[round], javaCpu[round]));
            final double[] cRound = runOnce(cCommand, seconds);
            c[round] = cRound[0];
            cCpu[round] = cRound[1];
            log.accept(String.format(Locale.ROOT, "round %d: c    %.2f Mpps (%.2f per CPU second)", round + 1, c[round], cCpu[round]));
        }
        return new Summary(pmd.text(), modeText, touch.text(), placement, burst, frameLength, java, c, javaCpu, cCpu, true);
    }

    // Each process compiles its own Java loop, and two compilations of one loop can differ by 20 %: the rounds of
    // several processes, pooled, keep one compilation from deciding the result.
    private static Summary runSameProcess(
        final RawLoop.Pmd pmd,
        final RawLoop.Mode mode,
        final RawLoop.Touch touch,
        final double seconds,
        final int burst,
        final int frameLength,
        final int rounds,
        final int processes,
        final String[] common,
        final Consumer<String> log) throws IOException, InterruptedException
    {
        final Path library = NativeBinaries.locate(C_LIBRARY_PROPERTY, "libspraynic_rawloop.so", "the C raw loop library");
        final List<String> command = javaCommand(NativeBinaries.linkedShim(library));
        command.addAll(List.of(common));
        command.addAll(List.of("--same-process", library.toString(), "--rounds", Integer.toString(rounds)));
        final double[][] pooled = new double[4][0]; // java wall, c wall, java cpu, c cpu
        boolean sameShim = true;
        for (int process = 0; process < processes; process++)
        {
            final String text = runForOutput(command, seconds * 2 * (rounds + 1));
            final Matcher shim = SAME_SHIM.matcher(text);
            if (!shim.find())
            {
                throw new IllegalStateException("unexpected output of " + String.join(" ", command) + "\n" + text);
            }
            sameShim &= Boolean.parseBoolean(shim.group(1));
            final String[] fields = {"javaRounds", "cRounds", "javaCpuRounds", "cCpuRounds"};
            final double[][] measured = new double[4][];
            for (int i = 0; i < fields.length; i++)
            {
                measured[i] = array(text, fields[i]);
                pooled[i] = concat(pooled[i], measured[i]);
            }
            final double[] ratios = new double[rounds];
            for (int round = 0; round < rounds; round++)
            {
                ratios[round] = measured[2][round] / measured[3][round];
            }
            log.accept(String.format(Locale.ROOT,
                "process %d: %d rounds, medians per CPU second java %.2f Mpps, c %.2f Mpps, of the rounds' java/c %.3f",
                process + 1, rounds, median(measured[2]), median(measured[3]), median(ratios)));
        }
        return new Summary(pmd.text(), mode.text(), touch.text(), Placement.SAME_PROCESS, burst,
            frameLength, pooled[0], pooled[1], pooled[2], pooled[3], sameShim);
    }

    private static double[] concat(final double[] head, final double[] tail)
    {
        final double[] joined = Arrays.copyOf(head, head.length + tail.length);
        System.arraycopy(tail, 0, joined, head.length, tail.length);
        return joined;
    }

    // this JVM's command line (less agents) running RawLoop's main; with the shim the C baselines link against, if given
    private static List<String> javaCommand(final Path shim)
    {
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(argument -> !argument.startsWith("-agentlib") && !argument.startsWith("-javaagent"))
            .filter(argument -> null == shim || !argument.startsWith("-D" + NativeLibrary.SHIM_PATH_PROPERTY + "="))
            .toList());
        if (null != shim)
        {
            command.add("-D" + NativeLibrary.SHIM_PATH_PROPERTY + "=" + shim);
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), RawLoop.class.getName()));
        return command;
    }

    private static double[] array(final String text, final String field)
    {
        final Matcher matcher = Pattern.compile("\"" + field + "\":\\[([^\\]]*)\\]").matcher(text);
        if (!matcher.find())
        {
            throw new IllegalStateException("no " + field + " in " + text);
        }
        return Arrays.stream(matcher.group(1).split(",")).mapToDouble(Double::parseDouble).toArray();
    }

    // {Mpps by wall-clock time, Mpps per CPU second}: control path, once per round
    private static double[] runOnce(final List<String> command, final double seconds) throws IOException, InterruptedException
    {
        final String text = runForOutput(command, seconds);
        final Matcher mpps = MPPS.matcher(text);
        final Matcher cpuMpps = CPU_MPPS.matcher(text);
        final Matcher packets = PACKETS.matcher(text);
        if (!mpps.find() || !cpuMpps.find() || !packets.find() || Long.parseLong(packets.group(1)) == 0)
        {
            throw new IllegalStateException("benchmark run failed: " + String.join(" ", command) + "\n" + text);
        }
        return new double[] {Double.parseDouble(mpps.group(1)), Double.parseDouble(cpuMpps.group(1))};
    }

    // what a benchmark process printed, once it exited 0 within its time; its output goes to a file, so that a
    // process that hangs is killed at the deadline rather than leaving a read of its pipe waiting forever
    private static String runForOutput(final List<String> command, final double seconds) throws IOException, InterruptedException
    {
        final Path output = Files.createTempFile("spraynic-rawloop-", ".out");
        try
        {
            final Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT).redirectOutput(output.toFile()).start();
            try
            {
                if (!process.waitFor((long)(seconds * 2) + 60, TimeUnit.SECONDS))
                {
                    throw new IllegalStateException("benchmark run timed out: " + String.join(" ", command));
                }
            }
            finally
            {
                process.destroyForcibly();
            }
            final String text = Files.readString(output, StandardCharsets.UTF_8);
            if (process.exitValue() != 0)
            {
                throw new IllegalStateException("benchmark run failed (exit " + process.exitValue() + "): " +
                    String.join(" ", command) + "\n" + text);
            }
            return text;
        }
        finally
        {
            Files.deleteIfExists(output);
        }
    }

    static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        final int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }
}
