package io.spraynic.conformance;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * How the suite takes the target's exposed region away while it runs (S9.3.2-1): the protocol has no deregistration
 * on the wire, so an implementer supplies one, typically a command of its own control interface ({@code spraynic
 * deregister --exchange DIR} for SprayNIC). It returns once the target no longer reads the region.
 */
@FunctionalInterface
public interface RegionRevoker
{
    /**
     * Deregisters the target's exposed region and returns once that is done.
     *
     * @return null once deregistered, else why it was not.
     */
    String revoke() throws IOException, InterruptedException;

    /**
     * A revoker that runs {@code command} with {@code sh -c} and waits for it: exit 0 is done; any other exit, or none
     * within {@code timeout} (the command is then killed), is not, with the command's last output.
     */
    static RegionRevoker command(final String command, final Duration timeout)
    {
        return () ->
        {
            final Process process = new ProcessBuilder(List.of("sh", "-c", command)).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            final java.io.ByteArrayOutputStream output = new java.io.ByteArrayOutputStream();
            final Thread reader = Thread.ofVirtual().start(() ->
            {
                try
                {
                    process.getInputStream().transferTo(output);
                }
                catch (final IOException ignored)
                {
                    // the process went: what it wrote so far is all there is
                }
            });
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
            {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                reader.join(1_000);
                return "'" + command + "' did not end within " + timeout.toMillis() + " ms" + tail(output);
            }
            reader.join(1_000);
            final int exit = process.exitValue();
            return exit == 0 ? null : "'" + command + "' exited " + exit + tail(output);
        };
    }

    private static String tail(final java.io.ByteArrayOutputStream output)
    {
        final String text = output.toString(StandardCharsets.UTF_8).strip();
        return text.isEmpty() ? "" : ": " + (text.length() > 300 ? "..." + text.substring(text.length() - 300) : text);
    }
}
