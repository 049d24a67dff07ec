package io.spraynic.bench.e2e;

import io.spraynic.bench.NativeBinaries;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs the C raw ping-pong ({@code spraynic-pingpong}, built from {@code benchmarks/src/main/c/ping_pong.c}
 * against the same shim) in a process of its own (EAL starts once per process) and reads its result.
 */
public final class CPingPong
{
    /** System property naming the C binary; else it is looked up under {@code spraynic.home}. */
    public static final String BINARY_PROPERTY = "spraynic.pingpong.path";

    private CPingPong()
    {
    }

    public static Path binary()
    {
        return NativeBinaries.locate(BINARY_PROPERTY, "spraynic-pingpong", "the C ping-pong");
    }

    public static LatencyResult run(final int frameLength, final int warmup, final int iterations)
        throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(binary().toString(), "--length", Integer.toString(frameLength),
            "--warmup", Integer.toString(warmup), "--iterations", Integer.toString(iterations))
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        final String text = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(120, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new IllegalStateException("the C ping-pong timed out");
        }
        if (process.exitValue() != 0)
        {
            throw new IllegalStateException("the C ping-pong failed (exit " + process.exitValue() + "): " + text);
        }
        return new LatencyResult("raw-c", number(text, "iterations"), number(text, "mismatches"),
            Double.parseDouble(field(text, "meanNs")), number(text, "p50Ns"), number(text, "p99Ns"),
            number(text, "p999Ns"), number(text, "maxNs"));
    }

    private static long number(final String json, final String name)
    {
        return Long.parseLong(field(json, name));
    }

    private static String field(final String json, final String name)
    {
        final Matcher matcher = Pattern.compile("\"" + name + "\":([0-9.]+)").matcher(json);
        if (!matcher.find())
        {
            throw new IllegalStateException("no " + name + " in " + json);
        }
        return matcher.group(1);
    }
}
