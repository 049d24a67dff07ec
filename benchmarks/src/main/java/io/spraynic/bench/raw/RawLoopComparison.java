package io.spraynic.bench.raw;

import io.spraynic.bench.NativeBinaries;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
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
 * Java against C on the same raw loop, in one invocation: rounds alternate a Java run and a C run,
 * each in a fresh process (EAL starts once per process), and the medians give the ratio. On a
 * shared, noisy machine only such a same-run ratio means anything.
 */
public final class RawLoopComparison
{
    /** System property naming the C binary; else it is looked up under {@code spraynic.home}. */
    public static final String C_BINARY_PROPERTY = "spraynic.rawloop.path";

    private static final Pattern MPPS = Pattern.compile("\"mpps\":([0-9.]+)");
    private static final Pattern CPU_MPPS = Pattern.compile("\"cpuMpps\":([0-9.]+)");
    private static final Pattern PACKETS = Pattern.compile("\"packets\":([0-9]+)");

    /**
     * Medians and every round's Mpps, by wall-clock time and per CPU second of the loop's thread.
     */
    public record Summary(
        String pmd, String mode, int burst, int frameLength, double[] javaMpps, double[] cMpps, double[] javaCpuMpps,
        double[] cCpuMpps)
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

        public String toText()
        {
            return String.format(Locale.ROOT,
                "raw %s %s (burst %d, %d B), median of %d alternating rounds: java %.2f Mpps, c %.2f Mpps, java/c = %.3f;" +
                " per CPU second: java %.2f, c %.2f, java/c = %.3f",
                pmd, mode, burst, frameLength, javaMpps.length, javaMedian(), cMedian(), ratio(),
                median(javaCpuMpps), median(cCpuMpps), cpuRatio());
        }

        public String toJson()
        {
            return String.format(Locale.ROOT,
                "{\"pmd\":\"%s\",\"mode\":\"%s\",\"burst\":%d,\"frameLength\":%d,\"rounds\":%d,\"javaMpps\":%.4f," +
                "\"cMpps\":%.4f,\"ratio\":%.4f,\"javaRounds\":%s,\"cRounds\":%s,\"javaCpuMpps\":%.4f,\"cCpuMpps\":%.4f," +
                "\"cpuRatio\":%.4f,\"javaCpuRounds\":%s,\"cCpuRounds\":%s}",
                pmd, mode, burst, frameLength, javaMpps.length, javaMedian(), cMedian(), ratio(),
                rounds(javaMpps), rounds(cMpps), median(javaCpuMpps), median(cCpuMpps), cpuRatio(),
                rounds(javaCpuMpps), rounds(cCpuMpps));
        }

        private static String rounds(final double[] values)
        {
            return Arrays.toString(values).replace(" ", "");
        }
    }

    private RawLoopComparison()
    {
    }

    public static Summary run(
        final RawLoop.Pmd pmd,
        final RawLoop.Mode mode,
        final double seconds,
        final int burst,
        final int frameLength,
        final int rounds,
        final Consumer<String> log) throws IOException, InterruptedException
    {
        final Path cBinary = locateCBinary();
        final String[] common = {
            "--pmd", pmd.text(), "--mode", mode.name().toLowerCase(Locale.ROOT),
            "--seconds", Double.toString(seconds), "--burst", Integer.toString(burst), "--length", Integer.toString(frameLength)};

        final List<String> javaCommand = new ArrayList<>();
        javaCommand.add(ProcessHandle.current().info().command().orElse("java"));
        javaCommand.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(argument -> !argument.startsWith("-agentlib") && !argument.startsWith("-javaagent")).toList());
        javaCommand.addAll(List.of("-cp", System.getProperty("java.class.path"), RawLoop.class.getName()));
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
        return new Summary(pmd.text(), mode.name().toLowerCase(Locale.ROOT), burst, frameLength, java, c, javaCpu, cCpu);
    }

    // {Mpps by wall-clock time, Mpps per CPU second}: control path, once per round
    private static double[] runOnce(final List<String> command, final double seconds) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        final byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor((long)(seconds * 2) + 60, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new IllegalStateException("benchmark run timed out: " + String.join(" ", command));
        }
        final String text = new String(output, StandardCharsets.UTF_8);
        final Matcher mpps = MPPS.matcher(text);
        final Matcher cpuMpps = CPU_MPPS.matcher(text);
        final Matcher packets = PACKETS.matcher(text);
        if (process.exitValue() != 0 || !mpps.find() || !cpuMpps.find() || !packets.find() ||
            Long.parseLong(packets.group(1)) == 0)
        {
            throw new IllegalStateException("benchmark run failed (exit " + process.exitValue() + "): " +
                String.join(" ", command) + "\n" + text);
        }
        return new double[] {Double.parseDouble(mpps.group(1)), Double.parseDouble(cpuMpps.group(1))};
    }

    private static Path locateCBinary()
    {
        return NativeBinaries.locate(C_BINARY_PROPERTY, "spraynic-rawloop", "the C raw loop");
    }

    static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        final int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }
}
